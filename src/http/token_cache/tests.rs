use super::*;
use std::fs::Permissions;

const URL: &str = "https://iam.example.test/identity/token";

fn cache(dir: &Path, key: &[u8]) -> TokenCache {
    TokenCache::in_dir(dir.join("tokens"), "test IAM", URL, key).expect("a private directory")
}

fn in_an_hour() -> SystemTime {
    // Whole seconds: the file keeps Unix seconds.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    UNIX_EPOCH + Duration::from_secs(now.as_secs() + 3600)
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn a_token_comes_back_until_it_is_forgotten() {
    let d = tempfile::tempdir().unwrap();
    let c = cache(d.path(), b"key-one");
    assert!(c.load().is_none(), "nothing stored yet");
    let exp = in_an_hour();
    c.store(b"eyJ.token.sig", exp);
    let (t, e) = c.load().expect("stored");
    assert_eq!((t.expose(), e), (&b"eyJ.token.sig"[..], exp));
    assert_eq!(mode(&c.path()), 0o600);
    assert_eq!(mode(&d.path().join("tokens")), 0o700);
    assert_eq!(c.path().file_name().unwrap().len(), 32);
    let raw = std::fs::read(c.path()).unwrap();
    assert!(
        !raw.windows(5).any(|w| w == b"token"),
        "the token is not in the file in the clear"
    );
    // A second store replaces the first; nothing else is left behind.
    c.store(b"eyJ.second.sig", exp);
    assert_eq!(c.load().unwrap().0.expose(), b"eyJ.second.sig");
    assert_eq!(
        std::fs::read_dir(d.path().join("tokens")).unwrap().count(),
        1
    );
    c.forget();
    assert!(c.load().is_none(), "forgotten");
    c.forget();
}

#[test]
fn another_key_or_url_names_another_file_and_does_not_open_this_one() {
    let d = tempfile::tempdir().unwrap();
    let one = cache(d.path(), b"key-one");
    let two = cache(d.path(), b"key-two");
    assert_ne!(one.path(), two.path());
    let other_url = TokenCache::in_dir(
        d.path().join("tokens"),
        "test IAM",
        "https://x/",
        b"key-one",
    )
    .unwrap();
    assert_ne!(one.path(), other_url.path());
    one.store(b"tok-one", in_an_hour());
    // The other key's file, put where this key looks.
    std::fs::copy(one.path(), two.path()).unwrap();
    assert!(two.load().is_none(), "a file of another key does not open");
    std::fs::copy(one.path(), other_url.path()).unwrap();
    assert!(other_url.load().is_none(), "nor one of another token URL");
    assert!(one.load().is_some());
}

#[test]
fn a_changed_byte_anywhere_is_no_token() {
    let d = tempfile::tempdir().unwrap();
    let c = cache(d.path(), b"key-one");
    c.store(b"eyJ.token.sig", in_an_hour());
    let good = std::fs::read(c.path()).unwrap();
    for i in [0, 1, 13, 20, good.len() - 1] {
        let mut bad = good.clone();
        bad[i] ^= 0x01;
        std::fs::write(c.path(), &bad).unwrap();
        assert!(c.load().is_none(), "byte {i} changed");
    }
    std::fs::write(c.path(), &good[..good.len() - 1]).unwrap();
    assert!(c.load().is_none(), "cut short");
    std::fs::write(c.path(), &good).unwrap();
    assert!(c.load().is_some(), "the original opens");
}

#[test]
fn a_file_open_to_others_or_a_symlink_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let c = cache(d.path(), b"key-one");
    c.store(b"eyJ.token.sig", in_an_hour());
    std::fs::set_permissions(c.path(), Permissions::from_mode(0o644)).unwrap();
    assert!(c.load().is_none(), "0644");
    std::fs::set_permissions(c.path(), Permissions::from_mode(0o600)).unwrap();
    assert!(c.load().is_some());
    let elsewhere = d.path().join("elsewhere");
    std::fs::rename(c.path(), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, c.path()).unwrap();
    assert!(c.load().is_none(), "a symlink is not followed");
    // A store replaces the link, never writes through it.
    let before = std::fs::read(&elsewhere).unwrap();
    c.store(b"eyJ.new.sig", in_an_hour());
    assert_eq!(std::fs::read(&elsewhere).unwrap(), before);
    assert!(!std::fs::symlink_metadata(c.path()).unwrap().is_symlink());
    assert_eq!(c.load().unwrap().0.expose(), b"eyJ.new.sig");
}

#[test]
fn a_token_at_or_near_its_end_is_not_used() {
    let d = tempfile::tempdir().unwrap();
    let c = cache(d.path(), b"key-one");
    c.store(b"old", SystemTime::now() - Duration::from_secs(5));
    assert!(c.load().is_none(), "expired");
    c.store(
        b"near",
        SystemTime::now() + MIN_LEFT - Duration::from_secs(2),
    );
    assert!(c.load().is_none(), "less than a minute left");
    c.store(
        b"fine",
        SystemTime::now() + MIN_LEFT + Duration::from_secs(5),
    );
    assert!(c.load().is_some());
}

#[test]
fn a_directory_open_to_others_or_a_symlink_is_no_cache() {
    let d = tempfile::tempdir().unwrap();
    let open = d.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, Permissions::from_mode(0o750)).unwrap();
    assert!(TokenCache::in_dir(open.clone(), "test IAM", URL, b"k").is_none());
    std::fs::set_permissions(&open, Permissions::from_mode(0o707)).unwrap();
    assert!(TokenCache::in_dir(open.clone(), "test IAM", URL, b"k").is_none());
    std::fs::set_permissions(&open, Permissions::from_mode(0o700)).unwrap();
    assert!(TokenCache::in_dir(open.clone(), "test IAM", URL, b"k").is_some());
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&open, &link).unwrap();
    assert!(TokenCache::in_dir(link, "test IAM", URL, b"k").is_none());
    assert!(
        TokenCache::in_dir(open, "test IAM", URL, b"").is_none(),
        "no credential, no key"
    );
}

#[test]
fn the_directory_follows_the_environment_and_the_switch() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        dir(&env(&[("XDG_RUNTIME_DIR", "/run/user/1000")])),
        Ok(PathBuf::from("/run/user/1000/fencekit/tokens"))
    );
    assert_eq!(
        dir(&env(&[])),
        Ok(PathBuf::from(format!("/run/fencekit/tokens/{}", euid())))
    );
    assert!(dir(&env(&[("XDG_RUNTIME_DIR", "/x"), (SWITCH, "off")])).is_err());
    assert!(dir(&env(&[(SWITCH, "OFF")])).is_err());
    let d = tempfile::tempdir().unwrap();
    let root = d.path().to_str().unwrap().to_string();
    let lookup = move |k: &str| (k == "XDG_RUNTIME_DIR").then(|| root.clone());
    let c = TokenCache::for_key_in_env(&lookup, "test IAM", URL, b"k").unwrap();
    assert!(c.path().starts_with(d.path().join("fencekit/tokens")));
    assert_eq!(mode(&d.path().join("fencekit/tokens")), 0o700);
}

#[test]
fn a_directory_that_cannot_be_made_or_is_gone_is_no_cache_and_no_error() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    // Not creatable (as on a read-only root, where root's permissions do
    // not help either).
    assert!(TokenCache::in_dir(file.join("tokens"), "test IAM", URL, b"k").is_none());
    // Gone after the cache was made: a store is silent, a load is none.
    let c = cache(d.path(), b"key-one");
    std::fs::remove_dir(d.path().join("tokens")).unwrap();
    c.store(b"eyJ.token.sig", in_an_hour());
    assert!(c.load().is_none());
    c.forget();
}
