//! AWS Signature Version 4, as the EC2 and STS Query APIs need it: the
//! canonical request, the string to sign, the derived signing key and the
//! `Authorization` header. Pure functions of their input (the caller passes
//! the time), no I/O.
//!
//! The algorithm (AWS General Reference, "Signature Version 4 signing
//! process"): every byte outside `A-Z a-z 0-9 - _ . ~` is percent-encoded in
//! upper-case hex; query parameters are sorted by encoded name, then value;
//! header names are lower-cased and sorted, values trimmed with inner runs
//! of blanks collapsed; the payload is hashed with SHA-256; the signing key
//! is HMAC-SHA256 chained over the date, the region, the service and
//! `aws4_request`, starting from `"AWS4" + secret`.
//!
//! The tests check the implementation against AWS's published test suite.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The algorithm name that starts every string to sign and header.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

type HmacSha256 = Hmac<Sha256>;

/// One request to sign. Header names may be in any case; `host` and
/// `x-amz-date` must be among them (and are then signed, as are all).
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// `GET`, `POST`.
    pub method: &'a str,
    /// The absolute path, already as sent (`/` for the Query APIs).
    pub path: &'a str,
    /// Query parameters, not encoded.
    pub query: &'a [(&'a str, &'a str)],
    /// Headers to sign, as sent.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body.
    pub payload: &'a [u8],
}

/// Where and when a signature is valid.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// `YYYYMMDD'T'HHMMSS'Z'`, the `x-amz-date` header's value.
    pub amz_date: &'a str,
    /// e.g. `us-east-1`.
    pub region: &'a str,
    /// e.g. `ec2`, `sts`.
    pub service: &'a str,
}

impl Scope<'_> {
    /// `YYYYMMDD/REGION/SERVICE/aws4_request`.
    pub fn credential_scope(&self) -> String {
        format!(
            "{}/{}/{}/aws4_request",
            self.date(),
            self.region,
            self.service
        )
    }

    fn date(&self) -> &str {
        self.amz_date.get(..8).unwrap_or(self.amz_date)
    }
}

/// Percent-encodes `s` the way SigV4 wants (RFC 3986 unreserved characters
/// stay, every other byte becomes `%XX`). Also the encoding of the Query
/// APIs' form bodies.
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hmac(key: &[u8], data: &[u8]) -> Zeroizing<[u8; 32]> {
    // HMAC takes a key of any length: this cannot fail.
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    Zeroizing::new(mac.finalize().into_bytes().into())
}

/// `name=value&…`, encoded and sorted (the canonical query string, and the
/// form body of a Query API request).
pub fn canonical_query(params: &[(&str, &str)]) -> String {
    let mut enc: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (uri_encode(k), uri_encode(v)))
        .collect();
    enc.sort();
    enc.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// A header value as SigV4 signs it: trimmed, runs of blanks collapsed.
fn canonical_value(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The canonical request and the signed-headers list.
pub fn canonical_request(r: &Request<'_>) -> (String, String) {
    let mut headers: Vec<(String, String)> = Vec::new();
    for (name, value) in r.headers {
        let name = name.to_ascii_lowercase();
        let value = canonical_value(value);
        match headers.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                v.push(',');
                v.push_str(&value);
            }
            None => headers.push((name, value)),
        }
    }
    headers.sort();
    let signed = headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let mut creq = String::new();
    creq.push_str(r.method);
    creq.push('\n');
    creq.push_str(r.path);
    creq.push('\n');
    creq.push_str(&canonical_query(r.query));
    creq.push('\n');
    for (n, v) in &headers {
        creq.push_str(n);
        creq.push(':');
        creq.push_str(v);
        creq.push('\n');
    }
    creq.push('\n');
    creq.push_str(&signed);
    creq.push('\n');
    creq.push_str(&sha256_hex(r.payload));
    (creq, signed)
}

/// The string to sign for a canonical request.
pub fn string_to_sign(scope: &Scope<'_>, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{}\n{}\n{}",
        scope.amz_date,
        scope.credential_scope(),
        sha256_hex(canonical_request.as_bytes())
    )
}

/// The signing key derived from the secret access key.
pub fn signing_key(secret: &[u8], scope: &Scope<'_>) -> Zeroizing<[u8; 32]> {
    let mut k = Zeroizing::new(Vec::with_capacity(4 + secret.len()));
    k.extend_from_slice(b"AWS4");
    k.extend_from_slice(secret);
    let k_date = hmac(&k, scope.date().as_bytes());
    let k_region = hmac(&k_date[..], scope.region.as_bytes());
    let k_service = hmac(&k_region[..], scope.service.as_bytes());
    hmac(&k_service[..], b"aws4_request")
}

/// The `Authorization` header's value for `r`, signed with the key pair.
pub fn authorization(
    access_key_id: &str,
    secret: &[u8],
    scope: &Scope<'_>,
    r: &Request<'_>,
) -> String {
    let (creq, signed) = canonical_request(r);
    let sts = string_to_sign(scope, &creq);
    let key = signing_key(secret, scope);
    let sig = hmac(&key[..], sts.as_bytes());
    format!(
        "{ALGORITHM} Credential={access_key_id}/{}, SignedHeaders={signed}, Signature={}",
        scope.credential_scope(),
        hex(&sig[..])
    )
}

/// `YYYYMMDD'T'HHMMSS'Z'` for a time since the Unix epoch (UTC).
pub fn amz_date(since_epoch: std::time::Duration) -> String {
    let secs = since_epoch.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = crate::time::civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    //! Vectors from the AWS Signature Version 4 Test Suite
    //! (aws-sig-v4-test-suite, "Copyright 2017 Amazon.com, Inc. or its
    //! affiliates", as published in the AWS General Reference). Only each
    //! case's request and expected canonical request / string to sign /
    //! signature are used, re-typed as data here.
    use super::*;

    const KEY_ID: &str = "AKIDEXAMPLE";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const SCOPE: Scope<'static> = Scope {
        amz_date: "20150830T123600Z",
        region: "us-east-1",
        service: "service",
    };
    const HOST: (&str, &str) = ("Host", "example.amazonaws.com");
    const DATE: (&str, &str) = ("X-Amz-Date", "20150830T123600Z");

    fn signature(r: &Request<'_>) -> String {
        let a = authorization(KEY_ID, SECRET.as_bytes(), &SCOPE, r);
        a.rsplit_once("Signature=").unwrap().1.to_string()
    }

    fn get<'a>(query: &'a [(&'a str, &'a str)], headers: &'a [(&'a str, &'a str)]) -> Request<'a> {
        Request {
            method: "GET",
            path: "/",
            query,
            headers,
            payload: b"",
        }
    }

    #[test]
    fn get_vanilla_query_order_key() {
        let r = get(&[("Param1", "value2"), ("Param1", "Value1")], &[HOST, DATE]);
        let (creq, signed) = canonical_request(&r);
        assert_eq!(
            creq,
            "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\n\
             x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\
             e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(signed, "host;x-amz-date");
        assert_eq!(
            authorization(KEY_ID, SECRET.as_bytes(), &SCOPE, &r),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1"
        );
    }

    #[test]
    fn get_vanilla_utf8_query_and_unreserved() {
        assert_eq!(
            signature(&get(&[("\u{1234}", "bar")], &[HOST, DATE])),
            "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"
        );
        let u = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        assert_eq!(
            signature(&get(&[(u, u)], &[HOST, DATE])),
            "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"
        );
    }

    #[test]
    fn get_header_value_trim() {
        let headers = [
            HOST,
            ("My-Header1", " value1"),
            ("My-Header2", " \"a   b   c\""),
            DATE,
        ];
        assert_eq!(
            signature(&get(&[], &headers)),
            "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"
        );
    }

    #[test]
    fn post_vanilla_form_and_session_token() {
        let post = |headers: &'static [(&'static str, &'static str)], body: &'static [u8]| {
            signature(&Request {
                method: "POST",
                path: "/",
                query: &[],
                headers,
                payload: body,
            })
        };
        assert_eq!(
            post(&[HOST, DATE], b""),
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
        const FORM: &[(&str, &str)] = &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            HOST,
            DATE,
        ];
        assert_eq!(
            post(FORM, b"Param1=value1"),
            "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"
        );
        const CHARSET: &[(&str, &str)] = &[
            (
                "Content-Type",
                "application/x-www-form-urlencoded; charset=utf8",
            ),
            HOST,
            DATE,
        ];
        assert_eq!(
            post(CHARSET, b"Param1=value1"),
            "1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe"
        );
        const TOKEN: &[(&str, &str)] = &[
            HOST,
            DATE,
            (
                "X-Amz-Security-Token",
                "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFq\
                 wAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE\
                 8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0r\
                 KwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJ\
                 abIQwj2ICCR/oLxBA==",
            ),
        ];
        assert_eq!(
            post(TOKEN, b""),
            "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"
        );
    }

    #[test]
    fn post_form_string_to_sign() {
        let r = Request {
            method: "POST",
            path: "/",
            query: &[],
            headers: &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                HOST,
                DATE,
            ],
            payload: b"Param1=value1",
        };
        let (creq, _) = canonical_request(&r);
        assert!(creq.ends_with(
            "content-type;host;x-amz-date\n\
             9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"
        ));
        assert_eq!(
            string_to_sign(&SCOPE, &creq),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n\
             42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281"
        );
    }

    #[test]
    fn dates_and_encoding() {
        assert_eq!(
            amz_date(std::time::Duration::from_secs(1_440_938_160)),
            "20150830T123600Z"
        );
        assert_eq!(uri_encode("a b/+=é"), "a%20b%2F%2B%3D%C3%A9");
        assert_eq!(
            canonical_query(&[("b", "2"), ("a", "x y"), ("InstanceId.1", "i-1")]),
            "InstanceId.1=i-1&a=x%20y&b=2"
        );
    }
}
