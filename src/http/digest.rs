//! HTTP Digest access authentication (RFC 7616), the client's side, with
//! no I/O: a `WWW-Authenticate` challenge read ([`Challenge::parse`]), the
//! `Authorization` answer computed ([`Digest::authorization`]) for MD5 or
//! SHA-256 (and their `-sess` forms), `qop=auth` with a counted `nc` and a
//! fresh `cnonce`, or RFC 2069's form when the server offers no qop, and
//! what a 401 to an authorized request means ([`Digest::refused`]): a
//! nonce the server calls stale is replaced once (the server refused the
//! request and so did not carry it out), anything else is a refused
//! credential.
//!
//! What it leaves to its callers: sending (a platform's client on
//! [`crate::http::Client`]) and deciding that a request may be sent again
//! (only after a 401, never after a lost answer). `qop=auth-int` (a hash
//! of the body) and `userhash` are not offered by the devices fencekit
//! talks to; a challenge asking only for them is refused by name.

use md5::Md5;
use sha2::Sha256;

/// A challenge's hash algorithm (RFC 7616 section 3.3, `algorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// `MD5` (the default when a challenge names none).
    Md5,
    /// `MD5-sess`.
    Md5Sess,
    /// `SHA-256`.
    Sha256,
    /// `SHA-256-sess`.
    Sha256Sess,
}

impl Algorithm {
    fn from_token(t: &str) -> Option<Algorithm> {
        match t.to_ascii_uppercase().as_str() {
            "MD5" => Some(Algorithm::Md5),
            "MD5-SESS" => Some(Algorithm::Md5Sess),
            "SHA-256" => Some(Algorithm::Sha256),
            "SHA-256-SESS" => Some(Algorithm::Sha256Sess),
            _ => None,
        }
    }

    /// As a challenge and an answer write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Md5 => "MD5",
            Algorithm::Md5Sess => "MD5-sess",
            Algorithm::Sha256 => "SHA-256",
            Algorithm::Sha256Sess => "SHA-256-sess",
        }
    }

    fn sess(self) -> bool {
        matches!(self, Algorithm::Md5Sess | Algorithm::Sha256Sess)
    }

    /// Preference when a server offers several challenges: SHA-256 first.
    fn rank(self) -> u8 {
        match self {
            Algorithm::Sha256 | Algorithm::Sha256Sess => 2,
            Algorithm::Md5 | Algorithm::Md5Sess => 1,
        }
    }

    /// The lowercase hex digest of `parts` joined by `:`.
    fn hex(self, parts: &[&[u8]]) -> String {
        fn feed<D: sha2::Digest>(parts: &[&[u8]]) -> Vec<u8> {
            let mut d = D::new();
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    d.update(b":");
                }
                d.update(p);
            }
            d.finalize().to_vec()
        }
        let bytes = match self {
            Algorithm::Md5 | Algorithm::Md5Sess => feed::<Md5>(parts),
            Algorithm::Sha256 | Algorithm::Sha256Sess => feed::<Sha256>(parts),
        };
        let mut s = String::with_capacity(bytes.len() * 2);
        for b in bytes {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }
}

/// Why a challenge cannot be answered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DigestError {
    /// No `Digest` challenge among those given.
    #[error("the server asks for no Digest authentication (WWW-Authenticate: {0})")]
    NotDigest(String),
    /// A Digest challenge without a realm or a nonce, or unparsable.
    #[error("the server's Digest challenge is malformed ({0})")]
    Malformed(&'static str),
    /// Only algorithms fencekit does not compute.
    #[error("the server's Digest challenge names algorithm {0}, which fencekit does not speak (MD5, SHA-256 and their -sess forms only)")]
    Algorithm(String),
    /// A qop list without `auth` (only `auth-int`).
    #[error("the server's Digest challenge offers qop {0}, without auth")]
    Qop(String),
}

/// One Digest challenge (`WWW-Authenticate: Digest …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// `realm`.
    pub realm: String,
    /// `nonce`.
    pub nonce: String,
    /// `opaque`, returned as it came.
    pub opaque: Option<String>,
    /// `algorithm`.
    pub algorithm: Algorithm,
    /// Whether `qop=auth` is offered (false: RFC 2069's form, no qop).
    pub qop_auth: bool,
    /// `stale=true`: the nonce expired, the credentials were good.
    pub stale: bool,
}

/// One `auth-scheme` with its parameters, as a header lists them.
struct Raw {
    scheme: String,
    params: Vec<(String, String)>,
}

/// Splits `WWW-Authenticate` text into its challenges (RFC 7235 section
/// 2.1: a scheme token, then `name=value` pairs, values a token or a
/// quoted string; a scheme may follow a comma).
fn challenges(header: &str) -> Result<Vec<Raw>, DigestError> {
    let b = header.as_bytes();
    let mut i = 0;
    let mut out: Vec<Raw> = Vec::new();
    let skip = |i: &mut usize| {
        while *i < b.len() && (b[*i] == b' ' || b[*i] == b'\t' || b[*i] == b',') {
            *i += 1;
        }
    };
    let is_tchar = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&c);
    loop {
        skip(&mut i);
        if i >= b.len() {
            break;
        }
        let start = i;
        while i < b.len() && is_tchar(b[i]) {
            i += 1;
        }
        if i == start {
            return Err(DigestError::Malformed("unexpected character"));
        }
        let token = &header[start..i];
        let mut j = i;
        while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
            j += 1;
        }
        if j < b.len() && b[j] == b'=' {
            // A parameter of the challenge before it (or a token68's '=').
            let Some(cur) = out.last_mut() else {
                return Err(DigestError::Malformed("a parameter before any scheme"));
            };
            j += 1;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            let value = if j < b.len() && b[j] == b'"' {
                j += 1;
                let mut v = Vec::new();
                loop {
                    match b.get(j) {
                        None => {
                            return Err(DigestError::Malformed("an unterminated quoted string"))
                        }
                        Some(b'"') => {
                            j += 1;
                            break;
                        }
                        Some(b'\\') if j + 1 < b.len() => {
                            v.push(b[j + 1]);
                            j += 2;
                        }
                        Some(c) => {
                            v.push(*c);
                            j += 1;
                        }
                    }
                }
                String::from_utf8(v).map_err(|_| DigestError::Malformed("a value not UTF-8"))?
            } else {
                let vs = j;
                while j < b.len() && is_tchar(b[j]) {
                    j += 1;
                }
                header[vs..j].to_string()
            };
            cur.params.push((token.to_ascii_lowercase(), value));
            i = j;
        } else {
            out.push(Raw {
                scheme: token.to_string(),
                params: Vec::new(),
            });
        }
    }
    Ok(out)
}

impl Challenge {
    /// The Digest challenge to answer among the `WWW-Authenticate` header
    /// values given (several headers, or several challenges in one): the
    /// strongest algorithm fencekit computes.
    pub fn parse<'a>(headers: impl IntoIterator<Item = &'a str>) -> Result<Challenge, DigestError> {
        let mut seen = Vec::new();
        let mut best: Option<Challenge> = None;
        let mut first_err: Option<DigestError> = None;
        for h in headers {
            seen.push(crate::http::text::printable(h, 120));
            for raw in challenges(h)? {
                if !raw.scheme.eq_ignore_ascii_case("digest") {
                    continue;
                }
                match Challenge::from_raw(&raw) {
                    Ok(c) => {
                        if best
                            .as_ref()
                            .is_none_or(|b| c.algorithm.rank() > b.algorithm.rank())
                        {
                            best = Some(c);
                        }
                    }
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        match (best, first_err) {
            (Some(c), _) => Ok(c),
            (None, Some(e)) => Err(e),
            (None, None) => Err(DigestError::NotDigest(match seen.is_empty() {
                true => "(none)".into(),
                false => seen.join("; "),
            })),
        }
    }

    fn from_raw(raw: &Raw) -> Result<Challenge, DigestError> {
        let get = |k: &str| {
            raw.params
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        let realm = get("realm").ok_or(DigestError::Malformed("no realm"))?;
        let nonce = get("nonce").ok_or(DigestError::Malformed("no nonce"))?;
        if nonce.is_empty() {
            return Err(DigestError::Malformed("an empty nonce"));
        }
        let algorithm = match get("algorithm") {
            None => Algorithm::Md5,
            Some(a) => Algorithm::from_token(a)
                .ok_or_else(|| DigestError::Algorithm(crate::http::text::printable(a, 40)))?,
        };
        let qop_auth = match get("qop") {
            None => false,
            Some(q) => {
                if !q.split(',').any(|t| t.trim().eq_ignore_ascii_case("auth")) {
                    return Err(DigestError::Qop(crate::http::text::printable(q, 40)));
                }
                true
            }
        };
        Ok(Challenge {
            realm: realm.to_string(),
            nonce: nonce.to_string(),
            opaque: get("opaque").map(str::to_string),
            algorithm,
            qop_auth,
            stale: get("stale").is_some_and(|s| s.eq_ignore_ascii_case("true")),
        })
    }
}

/// What a 401 to a request that carried an answer means.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The nonce was stale: the new one is taken, the request may be sent
    /// once more (it was refused, so not carried out).
    Stale,
    /// The user or the password is wrong (or the server lost track twice).
    Credentials,
}

/// The client's Digest state for one server: the challenge answered and
/// how many requests it answered (`nc`).
#[derive(Clone, Debug)]
pub struct Digest {
    challenge: Challenge,
    nc: u32,
    stale_renewed: bool,
}

/// Quotes `s` as an HTTP quoted-string.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A fresh client nonce: 16 random bytes in hex.
pub fn cnonce() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Digest {
    /// The state for `challenge`, nothing answered yet.
    pub fn new(challenge: Challenge) -> Digest {
        Digest {
            challenge,
            nc: 0,
            stale_renewed: false,
        }
    }

    /// The challenge being answered.
    pub fn challenge(&self) -> &Challenge {
        &self.challenge
    }

    /// The `Authorization` value for `method` on `uri` (the request
    /// target: path and query) as `user` with `password`, counting one
    /// more request with this nonce; `cnonce` is the client's nonce
    /// ([`cnonce`] makes one). Secret: the caller sends it as a sensitive
    /// header.
    pub fn authorization(
        &mut self,
        method: &str,
        uri: &str,
        user: &str,
        password: &[u8],
        cnonce: &str,
    ) -> String {
        self.nc = self.nc.wrapping_add(1);
        let nc = format!("{:08x}", self.nc);
        let c = &self.challenge;
        let alg = c.algorithm;
        let mut ha1 = alg.hex(&[user.as_bytes(), c.realm.as_bytes(), password]);
        if alg.sess() {
            ha1 = alg.hex(&[ha1.as_bytes(), c.nonce.as_bytes(), cnonce.as_bytes()]);
        }
        let ha2 = alg.hex(&[method.as_bytes(), uri.as_bytes()]);
        let response = match c.qop_auth {
            true => alg.hex(&[
                ha1.as_bytes(),
                c.nonce.as_bytes(),
                nc.as_bytes(),
                cnonce.as_bytes(),
                b"auth",
                ha2.as_bytes(),
            ]),
            false => alg.hex(&[ha1.as_bytes(), c.nonce.as_bytes(), ha2.as_bytes()]),
        };
        let mut s = format!(
            "Digest username={}, realm={}, uri={}, algorithm={}, nonce={}",
            quoted(user),
            quoted(&c.realm),
            quoted(uri),
            alg.as_str(),
            quoted(&c.nonce),
        );
        if c.qop_auth {
            s.push_str(&format!(", nc={nc}, cnonce={}, qop=auth", quoted(cnonce)));
        }
        s.push_str(&format!(", response={}", quoted(&response)));
        if let Some(o) = &c.opaque {
            s.push_str(&format!(", opaque={}", quoted(o)));
        }
        s
    }

    /// A 401 answered a request that carried [`Digest::authorization`],
    /// with these `WWW-Authenticate` values: a stale nonce is replaced and
    /// [`Refusal::Stale`] returned once in a row (the next success resets
    /// it: [`Digest::accepted`]); anything else is [`Refusal::Credentials`].
    pub fn refused<'a>(&mut self, headers: impl IntoIterator<Item = &'a str>) -> Refusal {
        match Challenge::parse(headers) {
            Ok(c) if c.stale && !self.stale_renewed => {
                self.challenge = c;
                self.nc = 0;
                self.stale_renewed = true;
                Refusal::Stale
            }
            _ => Refusal::Credentials,
        }
    }

    /// The server accepted an answer (a stale nonce may be renewed again).
    pub fn accepted(&mut self) {
        self.stale_renewed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response_of(header: &str) -> String {
        let start = header.find("response=\"").unwrap() + 10;
        header[start..start + header[start..].find('"').unwrap()].to_string()
    }

    /// RFC 7616 section 3.9.1: the same request answered with MD5 and
    /// with SHA-256.
    #[test]
    fn rfc7616_worked_examples() {
        let www = [
            r#"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
            r#"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=MD5, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#,
        ];
        let c = Challenge::parse(www).unwrap();
        assert_eq!(c.algorithm, Algorithm::Sha256, "SHA-256 is preferred");
        assert!(c.qop_auth && !c.stale);
        let cn = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ";
        let mut d = Digest::new(c);
        let h = d.authorization("GET", "/dir/index.html", "Mufasa", b"Circle of Life", cn);
        assert_eq!(
            response_of(&h),
            "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"
        );
        assert!(h.contains("nc=00000001") && h.contains("qop=auth"), "{h}");
        assert!(h.contains(r#"opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#));
        let mut d = Digest::new(Challenge::parse([www[1]]).unwrap());
        let h = d.authorization("GET", "/dir/index.html", "Mufasa", b"Circle of Life", cn);
        assert_eq!(response_of(&h), "8ca523f5e9506fed4657c9700eebdbec");
        assert!(h.starts_with(r#"Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=MD5"#));
        // The next request with the same nonce counts on.
        let h = d.authorization("GET", "/dir/index.html", "Mufasa", b"Circle of Life", cn);
        assert!(h.contains("nc=00000002"));
        assert_ne!(response_of(&h), "8ca523f5e9506fed4657c9700eebdbec");
    }

    /// RFC 2617 section 3.5 (MD5, qop=auth) and RFC 2069's form (no qop).
    #[test]
    fn rfc2617_example_and_no_qop() {
        let www = r#"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#;
        let mut d = Digest::new(Challenge::parse([www]).unwrap());
        let h = d.authorization(
            "GET",
            "/dir/index.html",
            "Mufasa",
            b"Circle Of Life",
            "0a4f113b",
        );
        assert_eq!(response_of(&h), "6629fae49393a05397450978507c4ef1");
        let mut d = Digest::new(
            Challenge::parse([
                r#"Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093""#,
            ])
            .unwrap(),
        );
        let h = d.authorization("GET", "/dir/index.html", "Mufasa", b"Circle Of Life", "x");
        assert!(!h.contains("qop") && !h.contains("nc="), "{h}");
        // H(H(A1):nonce:H(A2)) by hand.
        let ha1 = Algorithm::Md5.hex(&[b"Mufasa", b"testrealm@host.com", b"Circle Of Life"]);
        let ha2 = Algorithm::Md5.hex(&[b"GET", b"/dir/index.html"]);
        let want = Algorithm::Md5.hex(&[
            ha1.as_bytes(),
            b"dcd98b7102dd2f0e8b11d0f600bfb0c093",
            ha2.as_bytes(),
        ]);
        assert_eq!(response_of(&h), want);
    }

    #[test]
    fn sess_hashes_the_nonces_into_ha1() {
        let www = r#"Digest realm="r", nonce="n", qop=auth, algorithm=MD5-sess"#;
        let mut d = Digest::new(Challenge::parse([www]).unwrap());
        let h = d.authorization("POST", "/wsman", "admin", b"pw", "cn");
        let ha1 = Algorithm::Md5.hex(&[b"admin", b"r", b"pw"]);
        let ha1 = Algorithm::Md5.hex(&[ha1.as_bytes(), b"n", b"cn"]);
        let ha2 = Algorithm::Md5.hex(&[b"POST", b"/wsman"]);
        let want = Algorithm::Md5.hex(&[
            ha1.as_bytes(),
            b"n",
            b"00000001",
            b"cn",
            b"auth",
            ha2.as_bytes(),
        ]);
        assert_eq!(response_of(&h), want);
        assert!(h.contains("algorithm=MD5-sess"));
    }

    #[test]
    fn challenges_among_others_and_refusals() {
        let c = Challenge::parse([
            r#"Basic realm="x", Digest realm="AMT \"q\"", nonce=abc, stale=TRUE"#,
        ])
        .unwrap();
        assert_eq!((c.realm.as_str(), c.nonce.as_str()), ("AMT \"q\"", "abc"));
        assert!(c.stale && !c.qop_auth);
        assert!(matches!(
            Challenge::parse([r#"Basic realm="x""#]),
            Err(DigestError::NotDigest(_))
        ));
        assert!(matches!(
            Challenge::parse(std::iter::empty::<&str>()),
            Err(DigestError::NotDigest(_))
        ));
        assert_eq!(
            Challenge::parse([r#"Digest realm="r", nonce="n", qop="auth-int""#]),
            Err(DigestError::Qop("auth-int".into()))
        );
        assert!(matches!(
            Challenge::parse([r#"Digest realm="r", nonce="n", algorithm=SHA-512-256"#]),
            Err(DigestError::Algorithm(_))
        ));
        assert!(matches!(
            Challenge::parse([r#"Digest realm="r""#]),
            Err(DigestError::Malformed(_))
        ));
        assert!(Challenge::parse([r#"Digest realm="r, nonce="n"#]).is_err());
        for junk in ["", "=", "Digest ===", "\"", "Digest realm=\"\\"] {
            let _ = Challenge::parse([junk]);
        }
        // A quoted user is escaped.
        let mut d =
            Digest::new(Challenge::parse([r#"Digest realm="r", nonce="n", qop=auth"#]).unwrap());
        let h = d.authorization("POST", "/wsman", "a\"b", b"p", "c");
        assert!(h.contains(r#"username="a\"b""#), "{h}");
        // Stale once: the new nonce taken; twice in a row: credentials.
        let stale = [r#"Digest realm="r", nonce="n2", qop=auth, stale=true"#];
        assert_eq!(d.refused(stale), Refusal::Stale);
        assert_eq!(d.challenge().nonce, "n2");
        let h = d.authorization("POST", "/wsman", "admin", b"p", "c");
        assert!(h.contains("nc=00000001") && h.contains(r#"nonce="n2""#));
        assert_eq!(d.refused(stale), Refusal::Credentials);
        d.accepted();
        assert_eq!(d.refused(stale), Refusal::Stale);
        assert_eq!(
            d.refused([r#"Digest realm="r", nonce="n3", qop=auth"#]),
            Refusal::Credentials
        );
        assert_eq!(cnonce().len(), 32);
        assert_ne!(cnonce(), cnonce());
    }
}
