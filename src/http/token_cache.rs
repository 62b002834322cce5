//! A bearer token kept between processes, encrypted with a key derived
//! from the credential it was exchanged for (an API key), so that a
//! warm call is the API's request alone and the token service sees one
//! exchange per token life instead of one per call.
//!
//! Where: `$XDG_RUNTIME_DIR/fencekit/tokens` when that variable is set,
//! else `/run/fencekit/tokens/UID` (beside the lock's files,
//! [`crate::lock::run_dir`]). Directories are created 0700; one is used
//! only when it is a real directory (not a symlink) owned by the
//! effective UID with no group or other permission bits.
//! `FENCEKIT_TOKEN_CACHE=off` turns the cache off.
//!
//! One file per (service, token URL, credential): its name is the first
//! 32 hex digits of a SHA-256 over them. Its content is a version byte, a
//! random 12-byte nonce and the ChaCha20-Poly1305 sealing of the expiry
//! (Unix seconds, 8 bytes big-endian) and the token, keyed by HKDF-SHA256
//! of the credential, the file name and token URL as associated data: the
//! file is useless without the credential, and a foreign or altered one
//! does not open (it is ignored and replaced by the next store).
//!
//! Nothing here is an error to the caller: whatever is wrong (a read-only
//! root, a directory of someone else, a file that does not open) means no
//! cache, said once at debug level, never with a secret.

use crate::secret::Secret;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::hkdf;
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The variable that turns the cache off (`off`).
pub const SWITCH: &str = "FENCEKIT_TOKEN_CACHE";

/// A token is taken from the cache only with this much of its life left.
pub const MIN_LEFT: Duration = Duration::from_secs(60);

/// The format's version (the first byte of a file).
const VERSION: u8 = 1;

/// Largest file read.
const MAX_FILE: u64 = 64 << 10;

/// Separates this use of SHA-256 and HKDF from any other.
const DOMAIN: &[u8] = b"fencekit token cache v1";
const SALT: &[u8] = b"fencekit token cache v1 salt";
const INFO: &[u8] = b"fencekit token cache v1 key";

/// One credential's token file.
pub struct TokenCache {
    dir: PathBuf,
    name: String,
    token_url: String,
    key: LessSafeKey,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCache")
            .field("file", &self.dir.join(&self.name))
            .finish_non_exhaustive()
    }
}

/// The cache's directory as `env` (a variable lookup) names it, or why
/// there is none.
pub fn dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, &'static str> {
    if env(SWITCH).is_some_and(|v| v.trim().eq_ignore_ascii_case("off")) {
        return Err("turned off (FENCEKIT_TOKEN_CACHE=off)");
    }
    let xdg = env("XDG_RUNTIME_DIR").filter(|d| !d.is_empty());
    let base = crate::lock::run_dir(xdg.as_deref().map(std::ffi::OsStr::new)).join("tokens");
    Ok(match xdg {
        Some(_) => base,
        None => base.join(euid().to_string()),
    })
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Whether `dir` may hold tokens: a real directory of this user, closed to
/// everyone else.
fn private_dir(dir: &Path) -> Result<(), &'static str> {
    let m = std::fs::symlink_metadata(dir).map_err(|_| "the directory cannot be read")?;
    if !m.file_type().is_dir() {
        return Err("not a directory (or a symlink)");
    }
    private(
        &m,
        "the directory belongs to another user",
        "the directory is open to its group or others",
    )
}

/// Whether what `m` describes is this user's and closed to everyone else
/// (`other_user`, `open`: why not).
fn private(
    m: &std::fs::Metadata,
    other_user: &'static str,
    open: &'static str,
) -> Result<(), &'static str> {
    if m.uid() != euid() {
        return Err(other_user);
    }
    if m.mode() & 0o077 != 0 {
        return Err(open);
    }
    Ok(())
}

fn no_cache(why: &str) {
    tracing::debug!(why, "no token cache");
}

impl TokenCache {
    /// The cache of `secret`'s token from `token_url` (`service_label`
    /// names the token service), in the directory the process's
    /// environment names; `None` when there is none.
    pub fn for_key(service_label: &str, token_url: &str, secret: &[u8]) -> Option<TokenCache> {
        Self::for_key_in_env(&|k| std::env::var(k).ok(), service_label, token_url, secret)
    }

    /// As [`TokenCache::for_key`], the environment read through `env`.
    pub fn for_key_in_env(
        env: &dyn Fn(&str) -> Option<String>,
        service_label: &str,
        token_url: &str,
        secret: &[u8],
    ) -> Option<TokenCache> {
        match dir(env) {
            Ok(d) => Self::in_dir(d, service_label, token_url, secret),
            Err(why) => {
                no_cache(why);
                None
            }
        }
    }

    /// The cache in `dir` (created 0700 when missing).
    pub fn in_dir(
        dir: PathBuf,
        service_label: &str,
        token_url: &str,
        secret: &[u8],
    ) -> Option<TokenCache> {
        if secret.is_empty() {
            return None;
        }
        if std::fs::symlink_metadata(&dir).is_err() {
            if let Err(e) = crate::private::create_dir(&dir) {
                tracing::debug!(dir = %dir.display(), error = %e, "no token cache");
                return None;
            }
        }
        if let Err(why) = private_dir(&dir) {
            tracing::debug!(dir = %dir.display(), why, "no token cache");
            return None;
        }
        let mut h = Sha256::new();
        for part in [
            DOMAIN,
            service_label.as_bytes(),
            token_url.as_bytes(),
            secret,
        ] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        let name: String = h
            .finalize()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect();
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, SALT).extract(secret);
        let okm = prk.expand(&[INFO], &CHACHA20_POLY1305).ok()?;
        let key = LessSafeKey::new(UnboundKey::from(okm));
        Some(TokenCache {
            dir,
            name,
            token_url: token_url.to_string(),
            key,
        })
    }

    /// The file's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    fn aad(&self) -> Vec<u8> {
        let mut a = Vec::with_capacity(self.name.len() + 1 + self.token_url.len());
        a.extend_from_slice(self.name.as_bytes());
        a.push(0);
        a.extend_from_slice(self.token_url.as_bytes());
        a
    }

    /// The token held and when it expires, when there is one with at
    /// least [`MIN_LEFT`] of its life left by the wall clock.
    pub fn load(&self) -> Option<(Secret, SystemTime)> {
        match self.read() {
            Ok(t) => Some(t),
            Err(why) => {
                tracing::debug!(why, "no cached token");
                None
            }
        }
    }

    fn read(&self) -> Result<(Secret, SystemTime), &'static str> {
        let mut f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(self.path())
            .map_err(|_| "no file (or a symlink)")?;
        let m = f.metadata().map_err(|_| "the file cannot be read")?;
        if !m.file_type().is_file() {
            return Err("not a regular file");
        }
        private(
            &m,
            "the file belongs to another user",
            "the file is open to its group or others",
        )?;
        if m.len() > MAX_FILE {
            return Err("the file is too large");
        }
        let mut buf = zeroize::Zeroizing::new(Vec::with_capacity(m.len() as usize));
        (&mut f)
            .take(MAX_FILE + 1)
            .read_to_end(&mut buf)
            .map_err(|_| "the file cannot be read")?;
        let min = 1 + NONCE_LEN + 8 + CHACHA20_POLY1305.tag_len();
        if buf.len() < min || buf.len() as u64 > MAX_FILE || buf[0] != VERSION {
            return Err("not a token file of this version");
        }
        let nonce = Nonce::try_assume_unique_for_key(&buf[1..1 + NONCE_LEN])
            .map_err(|_| "not a token file of this version")?;
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(self.aad()), &mut buf[1 + NONCE_LEN..])
            .map_err(|_| "the file does not open with this key")?;
        let (exp, token) = plain.split_at(8);
        let exp = u64::from_be_bytes(exp.try_into().expect("8 bytes"));
        let expires = UNIX_EPOCH + Duration::from_secs(exp);
        let left = expires
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO);
        if left < MIN_LEFT {
            return Err("the token is at or near its end");
        }
        if token.is_empty() {
            return Err("an empty token");
        }
        Ok((Secret::new(token.to_vec()), expires))
    }

    /// Keeps `token`, good until `expires`; a failure (a read-only root, a
    /// full disk) is said at debug level and is otherwise no matter.
    pub fn store(&self, token: &[u8], expires: SystemTime) {
        if let Err(e) = self.write(token, expires) {
            tracing::debug!(error = %e, "token not cached");
        }
    }

    fn write(&self, token: &[u8], expires: SystemTime) -> std::io::Result<()> {
        let secs = expires
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| std::io::Error::other("no random nonce"))?;
        let mut body = zeroize::Zeroizing::new(Vec::with_capacity(8 + token.len() + 16));
        body.extend_from_slice(&secs.to_be_bytes());
        body.extend_from_slice(token);
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(self.aad()),
                &mut *body,
            )
            .map_err(|_| std::io::Error::other("sealing failed"))?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + body.len());
        out.push(VERSION);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&body);
        let mut tag = [0u8; 6];
        SystemRandom::new()
            .fill(&mut tag)
            .map_err(|_| std::io::Error::other("no random name"))?;
        let tmp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            self.name,
            std::process::id(),
            tag.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ));
        let written = (|| {
            let mut f: File = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(crate::private::FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)?;
            f.set_permissions(std::fs::Permissions::from_mode(crate::private::FILE_MODE))?;
            f.write_all(&out)?;
            std::fs::rename(&tmp, self.path())
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Forgets the token held (the API refused it): the file is removed.
    pub fn forget(&self) {
        match std::fs::remove_file(self.path()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::debug!(error = %e, "cached token not removed"),
        }
    }
}

#[cfg(test)]
mod tests;
