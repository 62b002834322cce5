//! The web configuration's checks of each request: basic-auth users
//! (bcrypt, verified one at a time, successful logins remembered under a
//! key of this process) and the rate limit. Reading and checking the file
//! is the parent module's.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zeroize::Zeroizing;

/// Most successful logins remembered (so a scrape every few seconds costs
/// one bcrypt verification, not one per scrape).
const CACHE_SIZE: usize = 64;
/// How long a request waits for the one bcrypt verifier before it is told
/// to come back (503), rather than queueing behind a flood of wrong passwords.
const VERIFY_QUEUE: Duration = Duration::from_secs(2);

/// What a basic-auth check found.
#[derive(Debug, PartialEq, Eq)]
pub enum AuthResult {
    Allowed,
    /// No, a malformed, or a wrong `Authorization` (401).
    Refused,
    /// The verifier is busy with other requests (503).
    Busy,
}

/// The basic-auth users: SHA-256 of each name (compared in constant time)
/// and its bcrypt hash.
pub struct Users {
    entries: Vec<([u8; 32], String)>,
    /// Verified when the name is unknown, so an unknown name takes as long
    /// as a known one with a wrong password.
    dummy: String,
    /// Keys of successful logins (HMAC under a key of this process).
    cache: Mutex<HashSet<[u8; 32]>>,
    cache_key: [u8; 32],
    verifier: Arc<tokio::sync::Semaphore>,
}

impl Users {
    pub(super) fn new(entries: Vec<([u8; 32], String)>, max_cost: u32) -> Users {
        Users {
            entries,
            // A well-formed hash of the highest cost configured that no
            // password matches in practice (an all-zero salt and digest).
            dummy: format!("$2y${max_cost:02}${}", ".".repeat(53)),
            cache: Mutex::new(HashSet::new()),
            cache_key: rand::random(),
            verifier: Arc::new(tokio::sync::Semaphore::new(1)),
        }
    }

    /// Checks an `Authorization` header's value.
    pub async fn check(&self, authorization: Option<&str>) -> AuthResult {
        let Some(credentials) = authorization.and_then(decode_basic) else {
            return AuthResult::Refused;
        };
        let (user, password) = credentials;
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.cache_key)
            .expect("HMAC takes any key length");
        mac.update(&(user.len() as u64).to_be_bytes());
        mac.update(user.as_bytes());
        mac.update(&password);
        let tag: [u8; 32] = mac.finalize().into_bytes().into();
        if self.cache.lock().is_ok_and(|c| c.contains(&tag)) {
            return AuthResult::Allowed;
        }
        // Every entry is compared, in constant time, whatever matches.
        let wanted: [u8; 32] = Sha256::digest(user.as_bytes()).into();
        let mut chosen = usize::MAX;
        for (i, (name, _)) in self.entries.iter().enumerate() {
            let same = constant_time_eq(name, &wanted);
            let mask = (same as usize).wrapping_neg();
            chosen = (i & mask) | (chosen & !mask);
        }
        let known = chosen != usize::MAX;
        let hash = match self.entries.get(chosen) {
            Some((_, h)) => h.clone(),
            None => self.dummy.clone(),
        };
        let Ok(Ok(_permit)) =
            tokio::time::timeout(VERIFY_QUEUE, self.verifier.clone().acquire_owned()).await
        else {
            return AuthResult::Busy;
        };
        // bcrypt takes tens of milliseconds: off the thread that serves
        // and checks.
        let verified = tokio::task::spawn_blocking(move || {
            bcrypt::verify(&password[..], &hash).unwrap_or(false)
        })
        .await
        .unwrap_or(false);
        if verified && known {
            if let Ok(mut c) = self.cache.lock() {
                if c.len() >= CACHE_SIZE {
                    c.clear();
                }
                c.insert(tag);
            }
            AuthResult::Allowed
        } else {
            AuthResult::Refused
        }
    }
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y));
    // Hidden from the optimiser, so the fold is never cut short.
    std::hint::black_box(diff) == 0
}

/// `Basic BASE64(user:password)` → the name and the password (zeroised on drop).
fn decode_basic(value: &str) -> Option<(String, Zeroizing<Vec<u8>>)> {
    use base64::Engine as _;
    let (scheme, rest) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = Zeroizing::new(
        base64::engine::general_purpose::STANDARD
            .decode(rest.trim())
            .ok()?,
    );
    let colon = raw.iter().position(|&b| b == b':')?;
    let user = std::str::from_utf8(&raw[..colon]).ok()?.to_string();
    Some((user, Zeroizing::new(raw[colon + 1..].to_vec())))
}

/// A token bucket (the web configuration's `rate_limit`).
pub struct RateLimit {
    interval: Duration,
    burst: f64,
    tokens: f64,
    last: std::time::Instant,
}

impl RateLimit {
    pub fn new(interval: Duration, burst: u32) -> RateLimit {
        RateLimit {
            interval,
            burst: burst as f64,
            tokens: burst as f64,
            last: std::time::Instant::now(),
        }
    }

    /// Whether one more request may be served now.
    pub fn allow(&mut self) -> bool {
        let now = std::time::Instant::now();
        let gained = now.duration_since(self.last).as_secs_f64() / self.interval.as_secs_f64();
        self.tokens = (self.tokens + gained).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_headers_are_read_strictly() {
        let (u, p) = decode_basic("Basic YWxpY2U6czpjcmV0").unwrap();
        assert_eq!((u.as_str(), &p[..]), ("alice", &b"s:cret"[..]));
        assert!(decode_basic("Bearer YWxpY2U6c2VjcmV0").is_none());
        assert!(decode_basic("Basic !!!").is_none());
        assert!(decode_basic("Basic YWxpY2U=").is_none());
    }

    #[tokio::test]
    async fn users_are_checked_against_their_bcrypt_hash() {
        use base64::Engine as _;
        let hash = bcrypt::hash("right", 4).unwrap();
        let users = Users::new(vec![(Sha256::digest(b"alice").into(), hash)], 4);
        let header = |u: &str, p: &str| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        };
        assert_eq!(users.check(None).await, AuthResult::Refused);
        assert_eq!(
            users.check(Some(&header("alice", "wrong"))).await,
            AuthResult::Refused
        );
        assert_eq!(
            users.check(Some(&header("bob", "right"))).await,
            AuthResult::Refused
        );
        assert_eq!(
            users.check(Some(&header("alice", "right"))).await,
            AuthResult::Allowed
        );
        // Now from the cache; a wrong password still is not.
        assert_eq!(
            users.check(Some(&header("alice", "right"))).await,
            AuthResult::Allowed
        );
        assert_eq!(
            users.check(Some(&header("alice", "righ"))).await,
            AuthResult::Refused
        );
    }

    #[test]
    fn the_rate_limit_allows_a_burst_then_one_per_interval() {
        let mut r = RateLimit::new(Duration::from_secs(3600), 3);
        assert_eq!((0..5).filter(|_| r.allow()).count(), 3);
    }
}
