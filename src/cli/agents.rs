//! `fencekit agents`: every fence agent name this binary answers
//! to, with the fence-agents package upstream ships it in and the release
//! whose behaviour it follows, one `NAME PACKAGE VERSION` line each. The
//! distribution packages are made from it (`packaging/agents`, drift-tested;
//! `Provides`), so a new family only sets `package` in its `agents/*.toml`.

use crate::agent::defs::defs;

/// The lines `fencekit agents` prints (each ends with a newline); `-` for a
/// family that names no package.
pub fn text() -> String {
    let mut out = String::new();
    for f in &defs().families {
        for name in f.names() {
            out.push_str(&format!(
                "{name} {} {}\n",
                f.package.unwrap_or("-"),
                f.compat_version
            ));
        }
    }
    out
}

/// Entry point of `fencekit agents`.
pub fn main() -> i32 {
    let mut stdout = std::io::stdout();
    match std::io::Write::write_all(&mut stdout, text().as_bytes()) {
        Ok(()) => crate::exit::OK,
        Err(_) => crate::exit::FAILURE,
    }
}
