//! Build script: compiles the agent definitions (`agents/*.toml`) into
//! static Rust tables, so that an agent call parses no TOML at start-up
//! (issue 17; `src/agent/defs.rs` includes the output).
//!
//! A definition that does not parse or resolve fails the build with the
//! file's name and the problem (the rules live in `src/agent/defs_source.rs`,
//! which the library's tests compile too).

#[path = "src/agent/defs_source.rs"]
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
    "aws.toml",
    "kubevirt.toml",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/agent/defs_source.rs");
    println!("cargo:rerun-if-changed=agents/common.toml");
    for f in FAMILY_FILES {
        println!("cargo:rerun-if-changed=agents/{f}");
    }
    if let Err(e) = agent_tables() {
        // A panic's message is what cargo shows: the file and the problem.
        panic!("invalid agent definitions: {e}");
    }
    static_unwinder();
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

/// The Rust source of the tables (types of `src/agent/defs.rs`).
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
