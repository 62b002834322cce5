//! Fencing methods, below both fronts: what one method is
//! ([`spec::MethodSpec`]: driver, endpoint, credential reference), where its
//! password comes from ([`credential`]), and the driver it builds
//! ([`driver::AnyDriver`]), and the one builder both the command line and
//! the inventory use ([`build`]). The fleet runs them; the agent front
//! builds one.

pub mod build;
pub mod credential;
pub mod driver;
pub mod platforms;
pub mod spec;

pub use crate::engine::driver::UrlForm;

/// Every URL form, platform by platform in registration order: what
/// `--help`, the man pages, the completions and the README list (one
/// definition; each row is the platform's own, next to its parser).
pub fn url_forms() -> impl Iterator<Item = &'static UrlForm> {
    platforms::PLATFORMS
        .iter()
        .flat_map(|p| p.url_forms().iter())
}

#[cfg(test)]
mod tests {
    use super::build;
    #[test]
    fn the_url_forms_are_what_the_builder_takes() {
        // A user from the command line (-l), as the forms without USER@ need.
        let o = build::MethodOptions {
            username: Some("admin".into()),
            ..Default::default()
        };
        for f in super::url_forms() {
            let r = build::from_url(f.example, &o);
            assert_eq!(r.is_ok(), f.target, "{f:?}: {r:?}");
        }
    }
}
