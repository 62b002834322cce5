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

/// Every URL form, platform by platform: what `--help`, the man pages, the
/// completions and the README list (one definition; each row is the
/// platform's own, next to its parser). A new platform adds its table here
/// (the platform registry gathers them when it lands).
pub const URL_FORMS: &[&[UrlForm]] = &[
    crate::ipmi::config::URL_FORMS,
    crate::redfish::config::URL_FORMS,
    crate::ssh::config::URL_FORMS,
    crate::snmp::config::URL_FORMS,
    crate::aws::config::URL_FORMS,
];

/// The rows of [`URL_FORMS`] in order.
pub fn url_forms() -> impl Iterator<Item = &'static UrlForm> {
    URL_FORMS.iter().flat_map(|p| p.iter())
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
