//! Generated artefacts: shell completions and man pages, from the clap
//! definition of the native CLI and the `agents/` definitions.

/// `fencekit completions SHELL`.
pub fn completions_main(shell: &str) -> i32 {
    eprintln!("fencekit: completions for {shell} are not generated yet");
    crate::exit::FAILURE
}

/// `fencekit man [PAGE]`.
pub fn man_main(page: Option<&str>) -> i32 {
    eprintln!(
        "fencekit: the man page {} is not generated yet",
        page.unwrap_or("fencekit")
    );
    crate::exit::FAILURE
}
