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
