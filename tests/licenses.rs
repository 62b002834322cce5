//! Dependency license policy, checked offline from `cargo metadata`.
//!
//! Every package that can end up in the Linux binary (normal, build and dev
//! dependencies, for the host platform) must carry an SPDX expression that
//! is satisfiable with the permissive licenses in [`ALLOWED`]. Copyleft
//! licenses (GPL, LGPL, AGPL, and also MPL-2.0, EPL, CDDL: none is needed
//! today, and adding one should be a reviewed decision that extends this
//! list) and packages without an SPDX expression fail, unless reviewed in
//! [`REVIEWED`].
//!
//! Not covered here: known security advisories (RustSec) — checking them
//! needs the advisory database from the network (`cargo deny check
//! advisories` or `cargo audit` where the network is available); and the C
//! libraries linked from the system (OpenSSL 3: Apache-2.0; zlib: Zlib),
//! which are not crates.

use std::process::Command;

/// Permissive licenses fencekit (Apache-2.0) may depend on.
const ALLOWED: &[&str] = &[
    "Apache-2.0",
    "MIT",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "Zlib",
    "CC0-1.0",
    "Unlicense",
    "BSL-1.0",
    "0BSD",
];

/// License exceptions allowed after `WITH`.
const EXCEPTIONS: &[&str] = &["LLVM-exception"];

/// Packages whose license is not an SPDX expression in their manifest,
/// reviewed by hand: (name, why it is acceptable).
const REVIEWED: &[(&str, &str)] = &[(
    "ring",
    "before 0.17.10 ring declared only a license file: ISC for its own code, \
     OpenSSL/SSLeay-style (permissive, BSD-like) for BoringSSL-derived code; \
     0.17.10 and later declare `Apache-2.0 AND ISC`",
)];

/// True when `expr` can be satisfied with [`ALLOWED`] licenses.
fn satisfiable(expr: &str) -> Result<bool, String> {
    // Legacy crates.io spellings: "MIT/Apache-2.0" means OR.
    let norm = expr
        .replace('/', " OR ")
        .replace('(', " ( ")
        .replace(')', " ) ");
    let tokens: Vec<&str> = norm.split_whitespace().collect();
    let mut pos = 0;
    let v = or_expr(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("trailing tokens in {expr:?}"));
    }
    Ok(v)
}

fn or_expr(t: &[&str], pos: &mut usize) -> Result<bool, String> {
    let mut v = and_expr(t, pos)?;
    while t.get(*pos) == Some(&"OR") {
        *pos += 1;
        let r = and_expr(t, pos)?;
        v = v || r;
    }
    Ok(v)
}

fn and_expr(t: &[&str], pos: &mut usize) -> Result<bool, String> {
    let mut v = atom(t, pos)?;
    while t.get(*pos) == Some(&"AND") {
        *pos += 1;
        let r = atom(t, pos)?;
        v = v && r;
    }
    Ok(v)
}

fn atom(t: &[&str], pos: &mut usize) -> Result<bool, String> {
    let Some(tok) = t.get(*pos) else {
        return Err("unexpected end of expression".into());
    };
    *pos += 1;
    if *tok == "(" {
        let v = or_expr(t, pos)?;
        if t.get(*pos) != Some(&")") {
            return Err("missing )".into());
        }
        *pos += 1;
        return Ok(v);
    }
    let id = tok.trim_end_matches('+');
    let mut ok = ALLOWED.contains(&id);
    if t.get(*pos) == Some(&"WITH") {
        let exc = t.get(*pos + 1).ok_or("WITH without an exception")?;
        *pos += 2;
        ok = ok && EXCEPTIONS.contains(exc);
    }
    Ok(ok)
}

fn host_triple() -> String {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host")
}

#[test]
fn every_dependency_has_an_allowed_license() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host_triple()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let packages = meta["packages"].as_array().expect("packages");
    assert!(packages.len() > 50, "suspiciously few packages");
    let mut bad = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or("?");
        let version = p["version"].as_str().unwrap_or("?");
        if name == "fencekit" {
            assert_eq!(p["license"].as_str(), Some("Apache-2.0"));
            continue;
        }
        match p["license"].as_str() {
            Some(expr) => match satisfiable(expr) {
                Ok(true) => {}
                Ok(false) => bad.push(format!("{name} {version}: {expr}")),
                Err(e) => bad.push(format!("{name} {version}: unparsable {expr:?}: {e}")),
            },
            None if REVIEWED.iter().any(|(n, _)| *n == name) => {}
            None => bad.push(format!(
                "{name} {version}: no SPDX license expression (license_file: {})",
                p["license_file"]
            )),
        }
    }
    assert!(
        bad.is_empty(),
        "dependencies outside the license policy (tests/licenses.rs):\n  {}",
        bad.join("\n  ")
    );
}

#[test]
fn expressions_are_evaluated() {
    assert_eq!(satisfiable("MIT OR Apache-2.0"), Ok(true));
    assert_eq!(satisfiable("MIT/Apache-2.0"), Ok(true));
    assert_eq!(satisfiable("(MIT OR Apache-2.0) AND Unicode-3.0"), Ok(true));
    assert_eq!(satisfiable("Apache-2.0 AND ISC"), Ok(true));
    assert_eq!(
        satisfiable("Apache-2.0 WITH LLVM-exception OR Apache-2.0 OR MIT"),
        Ok(true)
    );
    assert_eq!(satisfiable("GPL-3.0-only"), Ok(false));
    assert_eq!(satisfiable("MIT AND LGPL-2.1-or-later"), Ok(false));
    assert_eq!(satisfiable("GPL-2.0 OR MIT"), Ok(true));
    assert_eq!(satisfiable("MPL-2.0"), Ok(false));
    assert!(satisfiable("MIT OR (Apache-2.0").is_err());
}
