//! Build script: compiles the agent definitions (`agents/*.toml`) into
//! static Rust tables, so that an agent call parses no TOML at start-up
//! (issue 17; `src/platform/agent/defs.rs` includes the output).
//!
//! A definition that does not parse or resolve fails the build with the
//! file's name and the problem (the rules live in `src/platform/agent/defs_source.rs`,
//! which the library's tests compile too).

#[path = "src/platform/agent/defs_source.rs"]
#[allow(dead_code)]
mod defs_source;

use defs_source::{SrcFamily, SrcOption};
use std::fmt::Write as _;
use std::path::Path;

/// The family files under `agents/`, in the order the agent front lists
/// them (the first is the default family of man pages and tests). Every
/// `agents/*.toml` but `common.toml` must be listed here (checked below).
const FAMILY_FILES: &[&str] = &[
    "ipmilan.toml",
    "redfish.toml",
    "virsh.toml",
    "apc_snmp.toml",
    "eaton_snmp.toml",
    "ibmblade.toml",
    "intelmodular.toml",
    "ipdu.toml",
    "ifmib.toml",
    "emerson.toml",
    "aws.toml",
    "kubevirt.toml",
    "vmware_soap.toml",
    "vmware_rest.toml",
    "azure_arm.toml",
    "pve.toml",
    "nutanix_ahv.toml",
    "rhevm.toml",
    "openstack.toml",
    "eps.toml",
    "cisco_ucs.toml",
    "amt_ws.toml",
    "ilo.toml",
    "gce.toml",
    "ibm_vpc.toml",
    "ibm_powervs.toml",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/platform/agent/defs_source.rs");
    println!("cargo:rerun-if-changed=agents/common.toml");
    for f in FAMILY_FILES {
        println!("cargo:rerun-if-changed=agents/{f}");
    }
    if let Err(e) = agent_tables() {
        // A panic's message is what cargo shows: the file and the problem.
        panic!("invalid agent definitions: {e}");
    }
    static_unwinder();
    packed_relocations();
    startup_order();
}

/// Places the functions a fence agent's start runs next to each other in
/// the release binary (`bench/startup.order`, a list of symbol names made by
/// `bench/startup-order.sh`; LLD's `--symbol-ordering-file`).
///
/// Why: the kernel maps a binary's code into a process 64 kB around every
/// page it touches, and counts it in its resident set. The 430 kB of code
/// that `fence_ipmilan --version`, `-o metadata` and `-o status` run was
/// spread over the whole 8.5 MB `.text`, so a status call had 3.7 MB of code
/// resident (bench/README.md, "Start-up"). A name the list has and the
/// binary does not (code changed since it was made) is skipped silently: the
/// list only ever costs locality, never correctness.
///
/// Only where the linker is LLD: Rust's default on x86_64 Linux since 1.90
/// (rust-lld), unless a linker is chosen in RUSTFLAGS or the target's
/// linker variable. `FENCEKIT_NO_STARTUP_ORDER=1` opts out.
fn startup_order() {
    println!("cargo:rerun-if-changed=bench/startup.order");
    println!("cargo:rerun-if-env-changed=FENCEKIT_NO_STARTUP_ORDER");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("PROFILE") != "release"
        || var("TARGET") != "x86_64-unknown-linux-gnu"
        || std::env::var_os("FENCEKIT_NO_STARTUP_ORDER").is_some()
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
        || var("CARGO_ENCODED_RUSTFLAGS").contains("link")
    {
        return;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let minor = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            let v = String::from_utf8_lossy(&o.stdout).into_owned();
            let version = v.split_whitespace().nth(1)?.to_string();
            let mut parts = version.split('.');
            (parts.next()? == "1").then_some(())?;
            parts.next()?.parse::<u32>().ok()
        });
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("bench/startup.order");
    if minor.is_some_and(|m| m >= 90) && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Packs the executable's relative relocations (`-z pack-relative-relocs`,
/// `DT_RELR`) where the C library the binary links against can apply them
/// (glibc 2.36 and later define `GLIBC_ABI_DT_RELR`; the binary then needs
/// it, as it needs the other symbol versions of the glibc it was built on).
///
/// Why: a position-independent executable carries one 24-byte relocation
/// record for every pointer in its static data (vtables, the agent tables,
/// every `&'static str` in a static), about 9,900 of them, 237 kB that the
/// dynamic loader reads at every start, so 237 kB of every process's
/// resident set. Packed, they take a few kB (bench/README.md, "Start-up").
///
/// Where that glibc is not found (another C library, an older glibc), the
/// build goes on with plain relocations. `FENCEKIT_PLAIN_RELOCS=1` opts out.
fn packed_relocations() {
    println!("cargo:rerun-if-env-changed=FENCEKIT_PLAIN_RELOCS");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" || std::env::var_os("FENCEKIT_PLAIN_RELOCS").is_some() {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let libc = std::process::Command::new(&cc)
        .arg("-print-file-name=libc.so.6")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .filter(|p| p.is_absolute() && p.is_file());
    let relr = libc
        .as_deref()
        .and_then(|p| std::fs::read(p).ok())
        .is_some_and(|b| b.windows(17).any(|w| w == b"GLIBC_ABI_DT_RELR"));
    if relr {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Links GCC's unwinder statically (`libgcc_eh.a`, what `gcc -static-libgcc`
/// links) on Linux with glibc, so the binary no longer needs `libgcc_s.so.1`.
///
/// Why: every process that loads libgcc_s runs its constructor, which probes
/// the CPU with a dozen `cpuid` instructions; on a virtual machine each one
/// traps to the hypervisor (about 5 µs each on the project's machines). With
/// the library's own loading and relocation that was about 0.13 ms of every
/// agent call (bench/README.md, "Start-up"). Rust's standard library names
/// `-lgcc_s` itself, so `-C link-arg=-static-libgcc` has no effect; instead the
/// whole archive is linked into this crate, ahead of std's `-lgcc_s`, whose
/// symbols are then all defined and, linked `--as-needed`, it is dropped.
///
/// Where the archive is not found (another C compiler, another target), the
/// build goes on with the shared library and says so.
fn static_unwinder() {
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=FENCEKIT_SHARED_LIBGCC");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" || std::env::var_os("FENCEKIT_SHARED_LIBGCC").is_some() {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let found = std::process::Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_file());
    match found.as_deref().and_then(Path::parent) {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=static:+whole-archive=gcc_eh");
        }
        None => println!(
            "cargo:warning=libgcc_eh.a not found with `{cc} -print-file-name`: \
             linking libgcc_s.so.1 (costs start-up time, works the same)"
        ),
    }
}

/// Reads, resolves and writes `$OUT_DIR/agent_defs.rs`.
fn agent_tables() -> Result<(), String> {
    let read = |name: &str| {
        std::fs::read_to_string(Path::new("agents").join(name))
            .map_err(|e| format!("agents/{name}: {e}"))
    };
    let mut unlisted = Vec::new();
    for entry in std::fs::read_dir("agents").map_err(|e| format!("agents/: {e}"))? {
        let name = entry
            .map_err(|e| format!("agents/: {e}"))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".toml") && name != "common.toml" && !FAMILY_FILES.contains(&&*name) {
            unlisted.push(name);
        }
    }
    if !unlisted.is_empty() {
        return Err(format!(
            "agents/{}: not listed in FAMILY_FILES (build.rs)",
            unlisted.join(", agents/")
        ));
    }
    let common = read("common.toml")?;
    let texts: Vec<(&str, String)> = FAMILY_FILES
        .iter()
        .map(|f| read(f).map(|t| (*f, t)))
        .collect::<Result<_, _>>()?;
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(f, t)| (*f, t.as_str())).collect();
    let families = defs_source::load(&common, &pairs)?;
    let out =
        Path::new(&std::env::var("OUT_DIR").map_err(|e| e.to_string())?).join("agent_defs.rs");
    std::fs::write(&out, emit(&families)).map_err(|e| format!("{}: {e}", out.display()))
}

/// The Rust source of the tables (types of `src/platform/agent/defs.rs`).
fn emit(families: &[SrcFamily]) -> String {
    let mut s = String::new();
    s.push_str("// Generated by build.rs from agents/*.toml: do not edit.\n\n");
    let _ = writeln!(s, "/// How many agent families there are.");
    let _ = writeln!(s, "pub const FAMILY_COUNT: usize = {};\n", families.len());
    s.push_str("/// Every agent family, in `FAMILY_FILES` order (build.rs).\n");
    s.push_str("static DEFS_TABLE: Defs = Defs {\n    families: [\n");
    for f in families {
        s.push_str("    Family {\n");
        let _ = writeln!(s, "        name: {:?},", f.name);
        let _ = writeln!(s, "        shortdesc: {:?},", f.shortdesc);
        let _ = writeln!(s, "        longdesc: {:?},", f.longdesc);
        let _ = writeln!(s, "        vendor_url: {:?},", f.vendor_url);
        let _ = writeln!(s, "        driver: {:?},", f.driver);
        let _ = writeln!(s, "        compat_version: {:?},", f.compat_version);
        let _ = writeln!(s, "        port_as_ip: {},", f.port_as_ip);
        let _ = writeln!(s, "        login_required: {},", f.login_required);
        let _ = writeln!(s, "        password_required: {},", f.password_required);
        let _ = writeln!(s, "        plug_required: {},", f.plug_required);
        let _ = writeln!(s, "        actions: &{:?},", f.actions);
        let _ = writeln!(s, "        hidden_actions: &{:?},", f.hidden_actions);
        let _ = writeln!(s, "        login_refused: {:?},", f.login_refused);
        let _ = writeln!(s, "        privilege_refused: {:?},", f.privilege_refused);
        let _ = writeln!(s, "        package: {:?},", f.package);
        let _ = writeln!(s, "        fabric: {},", f.fabric);
        let _ = writeln!(s, "        device_failed: {:?},", f.device_failed);
        s.push_str("        aliases: &[\n");
        for a in &f.aliases {
            let defaults: Vec<(&str, &str)> = a
                .defaults
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let _ = writeln!(
                s,
                "            AliasDef {{ name: {:?}, shortdesc: {:?}, defaults: &{:?} }},",
                a.name, a.shortdesc, defaults
            );
        }
        s.push_str("        ],\n");
        s.push_str("        options: &[\n");
        for o in &f.options {
            emit_option(&mut s, o);
        }
        s.push_str("        ],\n");
        s.push_str("    },\n");
    }
    s.push_str("    ],\n};\n\n");
    s.push_str("/// The family files the tables were made from (for the drift test).\n");
    let _ = writeln!(
        s,
        "#[cfg(test)]\nconst FAMILY_FILES: &[&str] = &{FAMILY_FILES:?};"
    );
    s
}

fn emit_option(s: &mut String, o: &SrcOption) {
    let short = o.short.as_deref().and_then(|t| t.chars().next());
    let _ = writeln!(
        s,
        "            OptionDef {{ long: {:?}, key: {:?}, short: {:?}, old_key: {:?}, \
         ty: OptType::{:?}, metavar: {:?}, default: {:?}, required: {}, order: {}, \
         choices: &{:?}, truth: Truth::{:?}, ignored: {:?}, extension: {}, desc: {:?} }},",
        o.long,
        o.key(),
        short,
        o.old_key,
        o.ty,
        o.metavar,
        o.default,
        o.required,
        o.order,
        o.choices,
        o.truth,
        o.ignored,
        o.extension,
        o.desc
    );
}
