//! Message bodies of the commands the driver sends in a session or before
//! one: Get Chassis Status, Get Channel Cipher Suites records, Get System
//! GUID (with its byte-order guess) and the DCMI power reading.

use super::wire::{le32, need, Malformed, DCMI_GROUP};

/// Get Chassis Status response data after the completion code (IPMI 2.0 table 28-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChassisStatus {
    /// Current power state byte; bit 0 = system power is on.
    pub power: u8,
}

impl ChassisStatus {
    /// Decodes the data following the completion code.
    pub fn decode(data: &[u8]) -> Result<Self, Malformed> {
        need("Get Chassis Status response", data, 3)?;
        Ok(ChassisStatus { power: data[0] })
    }

    /// System power is on.
    pub fn is_on(&self) -> bool {
        self.power & 1 == 1
    }
}

/// One cipher suite record from Get Channel Cipher Suites (IPMI 2.0 table 22-19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CipherSuiteRecord {
    /// Cipher suite ID.
    pub id: u8,
    /// Authentication algorithm.
    pub auth: u8,
    /// Integrity algorithms offered (first listed).
    pub integrity: u8,
    /// Confidentiality algorithm (first listed).
    pub conf: u8,
}

/// Parses the concatenated record data of Get Channel Cipher Suites.
/// Unparseable tails are ignored: the list is advice, the Open Session
/// exchange is authoritative.
pub fn parse_cipher_suite_records(data: &[u8]) -> Vec<CipherSuiteRecord> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            0xc0 | 0xc1 => {
                let skip = if data[i] == 0xc1 { 3 } else { 0 };
                let start = i + 1;
                if start + skip >= data.len() {
                    break;
                }
                let id = data[start];
                let mut j = start + 1 + skip;
                let (mut auth, mut integ, mut conf) = (None, None, None);
                while j < data.len() && data[j] & 0xc0 != 0xc0 {
                    let b = data[j];
                    match b & 0xc0 {
                        0x00 => auth = auth.or(Some(b & 0x3f)),
                        0x40 => integ = integ.or(Some(b & 0x3f)),
                        0x80 => conf = conf.or(Some(b & 0x3f)),
                        _ => {}
                    }
                    j += 1;
                }
                if let (Some(auth), Some(integrity), Some(conf)) = (auth, integ, conf) {
                    out.push(CipherSuiteRecord {
                        id,
                        auth,
                        integrity,
                        conf,
                    });
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

/// Reads Get Channel Cipher Suites data whose records lack their C0h
/// start-of-record tags (Sun ILOM, FreeIPMI's `sun20`): runs of an ID
/// followed by its authentication (00b), integrity (01b) and
/// confidentiality (10b) algorithm bytes. Empty unless every byte fits.
pub fn parse_untagged_cipher_suite_records(data: &[u8]) -> Vec<CipherSuiteRecord> {
    let mut out = Vec::new();
    for rec in data.chunks(4) {
        match rec {
            [id, a, i, c] if a & 0xc0 == 0 && i & 0xc0 == 0x40 && c & 0xc0 == 0x80 => {
                out.push(CipherSuiteRecord {
                    id: *id,
                    auth: a & 0x3f,
                    integrity: i & 0x3f,
                    conf: c & 0x3f,
                })
            }
            _ => return Vec::new(),
        }
    }
    out
}

/// How a BMC laid out the 16 bytes of a GUID. BMCs disagree, so the
/// system GUID is read under each (see [`SystemGuid`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuidEncoding {
    /// SMBIOS (3.0 §7.2.1): time_low, time_mid, time_hi_and_version
    /// little-endian, the rest in network order — the bytes of the SMBIOS
    /// system UUID as `dmidecode` and Redfish `ComputerSystem.UUID` print
    /// them. ipmitool 1.8.19 names it the most common BMC encoding ("Most
    /// implementations like AMI MegaRAC do it the SMBIOS way",
    /// include/ipmitool/ipmi_mc.h) and prefers it when guessing.
    Smbios,
    /// RFC 4122 §4.1.2: every field in network order, the bytes as printed.
    Rfc4122,
    /// The IPMI specification's own layout (IPMI 2.0 §20.8, table 20-10;
    /// used by §22.14): all 16 bytes least-significant first, i.e. the
    /// RFC 4122 bytes fully reversed.
    Ipmi,
}

impl GuidEncoding {
    /// Every encoding, in the order a guess prefers them (ipmitool's: SMBIOS, IPMI, RFC 4122).
    pub const ALL: [GuidEncoding; 3] = [
        GuidEncoding::Smbios,
        GuidEncoding::Ipmi,
        GuidEncoding::Rfc4122,
    ];

    /// The name shown with a UUID read this way.
    pub fn as_str(self) -> &'static str {
        match self {
            GuidEncoding::Smbios => "smbios",
            GuidEncoding::Rfc4122 => "rfc4122",
            GuidEncoding::Ipmi => "ipmi",
        }
    }

    /// The RFC 4122 (network-order) bytes of a GUID stored this way.
    pub fn to_network_order(self, raw: &[u8; 16]) -> [u8; 16] {
        let mut b = *raw;
        match self {
            GuidEncoding::Rfc4122 => {}
            GuidEncoding::Smbios => {
                b[0..4].reverse();
                b[4..6].reverse();
                b[6..8].reverse();
            }
            GuidEncoding::Ipmi => b.reverse(),
        }
        b
    }

    /// The 16 bytes a BMC using this encoding sends for the UUID whose
    /// network-order bytes are `uuid` (the inverse of [`Self::to_network_order`]).
    pub fn encode(self, uuid: &[u8; 16]) -> [u8; 16] {
        // each transformation is its own inverse
        self.to_network_order(uuid)
    }
}

/// Get System GUID response data after the completion code (IPMI 2.0 §22.14:
/// 16 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemGuid {
    /// The bytes as the BMC sent them.
    pub raw: [u8; 16],
}

impl SystemGuid {
    /// Decodes the data following the completion code (exactly 16 bytes;
    /// ipmitool refuses any other length too).
    pub fn decode(data: &[u8]) -> Result<Self, Malformed> {
        if data.len() != 16 {
            return Err(Malformed::BadLength {
                field: 16,
                actual: data.len(),
            });
        }
        let mut raw = [0u8; 16];
        raw.copy_from_slice(data);
        Ok(SystemGuid { raw })
    }

    /// The canonical 8-4-4-4-12 text of the GUID read under `enc`.
    pub fn text(&self, enc: GuidEncoding) -> String {
        let b = enc.to_network_order(&self.raw);
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        crate::engine::identity::hyphenate(&h)
    }

    /// The encoding a reader would guess, as ipmitool 1.8.19 `mc guid`
    /// (auto) does: among the encodings whose version nibble is valid
    /// (1-5), a time-based (version 1) one whose timestamp lies between
    /// 1970 and `now_unix` wins at once (in RFC 4122, IPMI, SMBIOS order);
    /// otherwise the last valid in that order, so SMBIOS beats IPMI beats
    /// RFC 4122. `None`: no encoding gives a valid version.
    pub fn guess(&self, now_unix: i64) -> Option<GuidEncoding> {
        let mut pick = None;
        for enc in [
            GuidEncoding::Rfc4122,
            GuidEncoding::Ipmi,
            GuidEncoding::Smbios,
        ] {
            let b = enc.to_network_order(&self.raw);
            let version = b[6] >> 4;
            if !(1..=5).contains(&version) {
                continue;
            }
            pick = Some(enc);
            if version == 1 {
                let time_hi = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
                let time_mid = u64::from(u16::from_be_bytes([b[4], b[5]]));
                let time_low = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
                let t100ns = (time_hi << 48) | (time_mid << 32) | time_low;
                // 100 ns intervals since 1582-10-15; 12219292800 s to 1970
                let unix = (t100ns / 10_000_000) as i64 - 12_219_292_800;
                if (0..=now_unix).contains(&unix) {
                    break;
                }
            }
        }
        pick
    }

    /// The GUID under every encoding, the guessed one first, without
    /// repeats (a GUID can read the same two ways).
    pub fn readings(&self, now_unix: i64) -> Vec<(GuidEncoding, String)> {
        let first = self.guess(now_unix);
        let order = first
            .into_iter()
            .chain(GuidEncoding::ALL.into_iter().filter(|e| Some(*e) != first));
        let mut out: Vec<(GuidEncoding, String)> = Vec::new();
        for enc in order {
            let t = self.text(enc);
            if !out.iter().any(|(_, x)| *x == t) {
                out.push((enc, t));
            }
        }
        out
    }
}

/// DCMI Get Power Reading request data, mode 01h "system power statistics"
/// (DCMI 1.5 table 6-16; what `ipmitool dcmi power reading` sends).
pub fn dcmi_power_reading_request() -> [u8; 4] {
    [DCMI_GROUP, 0x01, 0x00, 0x00]
}

/// DCMI Get Power Reading response data after the completion code (DCMI
/// 1.5 table 6-16), all figures least-significant byte first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcmiPowerReading {
    /// Current power, watts.
    pub current: u16,
    /// Minimum over the sampling period, watts.
    pub minimum: u16,
    /// Maximum over the sampling period, watts.
    pub maximum: u16,
    /// Average over the sampling period, watts.
    pub average: u16,
    /// IPMI timestamp of the reading.
    pub timestamp: u32,
    /// Statistics reporting period, milliseconds.
    pub period_ms: u32,
    /// Power reading state byte; bit 6 set = power measurement active.
    pub state: u8,
}

impl DcmiPowerReading {
    /// Bytes of the response data after the completion code.
    pub const LEN: usize = 18;

    /// Decodes the data following the completion code (group ID first).
    pub fn decode(data: &[u8]) -> Result<Self, Malformed> {
        need("DCMI Get Power Reading response", data, Self::LEN)?;
        if data[0] != DCMI_GROUP {
            return Err(Malformed::BadField("DCMI group extension ID"));
        }
        let u16le = |i: usize| u16::from_le_bytes([data[i], data[i + 1]]);
        Ok(DcmiPowerReading {
            current: u16le(1),
            minimum: u16le(3),
            maximum: u16le(5),
            average: u16le(7),
            timestamp: le32(&data[9..13]),
            period_ms: le32(&data[13..17]),
            state: data[17],
        })
    }

    /// Encodes the data after the completion code (lab side).
    pub fn encode(&self) -> Vec<u8> {
        let mut d = vec![DCMI_GROUP];
        for w in [self.current, self.minimum, self.maximum, self.average] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(&self.timestamp.to_le_bytes());
        d.extend_from_slice(&self.period_ms.to_le_bytes());
        d.push(self.state);
        d
    }

    /// The BMC says the figures are a live measurement (state bit 6).
    pub fn active(&self) -> bool {
        self.state & 0x40 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_suite_records_parse() {
        // pyghmi's answer: suites 3 and 17
        let data = [0xc0, 3, 0x01, 0x41, 0x81, 0xc0, 17, 0x03, 0x44, 0x81];
        let r = parse_cipher_suite_records(&data);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1],
            CipherSuiteRecord {
                id: 17,
                auth: 3,
                integrity: 4,
                conf: 1
            }
        );
        assert!(parse_cipher_suite_records(&[0xc0]).is_empty());
        // Sun ILOM's records without tags: not records to the tagged
        // reader, the same suites to the untagged one
        let untagged = [3, 0x01, 0x41, 0x81, 17, 0x03, 0x44, 0x81];
        assert!(parse_cipher_suite_records(&untagged).is_empty());
        assert_eq!(parse_untagged_cipher_suite_records(&untagged)[1], r[1]);
        // garbage is neither
        let junk = [0x5a, 0xff, 0x00, 0x13, 0x37, 0x01, 0xee, 0x42];
        assert!(parse_cipher_suite_records(&junk).is_empty());
        assert!(parse_untagged_cipher_suite_records(&junk).is_empty());
        assert!(parse_untagged_cipher_suite_records(&untagged[..6]).is_empty());
    }

    /// One GUID, 00112233-4455-6677-8899-aabbccddeeff, as each encoding
    /// stores it (SMBIOS 3.0 §7.2.1 gives this example for its layout).
    const SMBIOS_BYTES: [u8; 16] = [
        0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];
    const RFC4122_BYTES: [u8; 16] = [
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];
    const IPMI_BYTES: [u8; 16] = [
        0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        0x00,
    ];
    const GUID: &str = "00112233-4455-6677-8899-aabbccddeeff";

    #[test]
    fn one_guid_in_each_encoding_reads_the_same() {
        for (enc, raw) in [
            (GuidEncoding::Smbios, SMBIOS_BYTES),
            (GuidEncoding::Rfc4122, RFC4122_BYTES),
            (GuidEncoding::Ipmi, IPMI_BYTES),
        ] {
            let g = SystemGuid::decode(&raw).unwrap();
            assert_eq!(g.text(enc), GUID, "{enc:?}");
            assert_eq!(enc.encode(&RFC4122_BYTES), raw, "{enc:?}");
            // every encoding is among the readings, each named once
            let r = g.readings(0);
            assert!(r.contains(&(enc, GUID.to_string())), "{enc:?}: {r:?}");
            assert_eq!(r.len(), 3);
        }
        // the other readings of the SMBIOS bytes are what a wrong guess prints
        let g = SystemGuid::decode(&SMBIOS_BYTES).unwrap();
        assert_eq!(
            g.text(GuidEncoding::Rfc4122),
            "33221100-5544-7766-8899-aabbccddeeff"
        );
        assert_eq!(
            g.text(GuidEncoding::Ipmi),
            "ffeeddcc-bbaa-9988-6677-445500112233"
        );
    }

    #[test]
    fn the_guess_follows_ipmitool() {
        // a version-4 GUID (the lab's node 1) stored each way is guessed right
        let uuid = [
            0x4c, 0x41, 0x42, 0x30, 0x00, 0x00, 0x40, 0x01, 0x80, 0x00, 0xfe, 0x00, 0x00, 0x00,
            0x00, 0x01,
        ];
        for enc in GuidEncoding::ALL {
            let g = SystemGuid::decode(&enc.encode(&uuid)).unwrap();
            assert_eq!(g.guess(0), Some(enc), "{enc:?}");
            let first = &g.readings(0)[0];
            assert_eq!(
                first,
                &(enc, "4c414230-0000-4001-8000-fe0000000001".to_string())
            );
        }
        // when several readings have a valid version, SMBIOS wins (ipmitool:
        // "GUID_SMBIOS ... will take precedence")
        let both = [
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x40, 0x80, 0, 0, 0, 0, 0, 0, 1,
        ];
        assert_eq!(
            SystemGuid::decode(&both).unwrap().guess(0),
            Some(GuidEncoding::Smbios)
        );
        // a time-based GUID with a plausible timestamp is taken at once:
        // RFC 4122 order, 2020-ish time (time_hi 0x1ea, version 1)
        let t = [
            0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xea, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4,
            0x30, 0xc8,
        ];
        assert_eq!(
            SystemGuid::decode(&t).unwrap().guess(2_000_000_000),
            Some(GuidEncoding::Rfc4122)
        );
        // nothing valid: no guess, every reading still offered
        let none = SystemGuid::decode(&[0u8; 16]).unwrap();
        assert_eq!(none.guess(0), None);
        assert_eq!(none.readings(0).len(), 1, "all three read the same");
    }

    #[test]
    fn system_guid_needs_exactly_sixteen_bytes() {
        assert!(SystemGuid::decode(&[0; 15]).is_err());
        assert!(SystemGuid::decode(&[0; 17]).is_err());
        assert!(SystemGuid::decode(&[]).is_err());
    }

    #[test]
    fn dcmi_power_reading_roundtrip_and_state() {
        let r = DcmiPowerReading {
            current: 212,
            minimum: 9,
            maximum: 300,
            average: 150,
            timestamp: 0x5f5e_1000,
            period_ms: 1000,
            state: 0x40,
        };
        let d = r.encode();
        assert_eq!(d.len(), DcmiPowerReading::LEN);
        assert_eq!(&d[..3], &[DCMI_GROUP, 212, 0]);
        assert_eq!(DcmiPowerReading::decode(&d), Ok(r));
        assert!(r.active());
        assert!(!DcmiPowerReading { state: 0, ..r }.active());
        // a reading from ipmitool's struct layout: group, cur 0x0102, ...
        let wire = [
            0xdc, 0x02, 0x01, 0x01, 0x00, 0x03, 0x00, 0x02, 0x01, 0x01, 0x02, 0x03, 0x04, 0xe8,
            0x03, 0x00, 0x00, 0x40,
        ];
        let p = DcmiPowerReading::decode(&wire).unwrap();
        assert_eq!(
            (p.current, p.minimum, p.maximum, p.average),
            (0x0102, 1, 3, 0x0102)
        );
        assert_eq!((p.timestamp, p.period_ms), (0x04030201, 1000));
        // not DCMI, or short: typed errors
        let mut other = wire;
        other[0] = 0x00;
        assert!(DcmiPowerReading::decode(&other).is_err());
        for n in 0..wire.len() {
            assert!(DcmiPowerReading::decode(&wire[..n]).is_err());
        }
        assert_eq!(dcmi_power_reading_request(), [0xdc, 0x01, 0x00, 0x00]);
    }
}
