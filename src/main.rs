//! `fencekit`: argv[0] decides the front — a ClusterLabs agent name runs the
//! agent front, anything else the native command line. Nothing else here.

fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let name = args
        .first()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("fencekit")
        .to_string();
    let code = if fencekit::agent_known(&name) {
        args.remove(0);
        fencekit::agent_entry(&name, args)
    } else {
        fencekit::cli::run::main(args)
    };
    std::process::exit(code);
}

/// The C library's `pow`, defined in the executable so that the dynamic
/// loader never has to load libm.
///
/// tokio's multi-thread scheduler (its `rt-multi-thread` feature is switched
/// on by the SSH crate) calls `pow` for a moving average; fencekit only ever
/// builds current-thread runtimes, but the reference stays in the binary, and
/// with glibc `pow` lives in libm — a library loaded, relocated and searched
/// at every start for that one symbol: about 60 µs of a 1 ms agent call
/// (bench/README.md, "Start-up"). This definition is musl's `pow` (the
/// `libm` crate), correct to within an ulp, so anything that calls it gets
/// the right answer — including a library loaded later (the executable
/// exports the symbol, so it would take precedence over libm's).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
