//! fence_kdump messages: 8 bytes, magic then version, no I/O.

/// The magic number that starts every fence_kdump message.
pub const MAGIC: u32 = 0x1B30_2A40;

/// The only message version defined (fence-agents `FENCE_KDUMP_MSGV1`).
pub const VERSION_1: u32 = 1;

/// The default UDP port (fence_kdump's `ipport`).
pub const DEFAULT_PORT: u16 = 7410;

/// The size of a message on the wire.
pub const MESSAGE_LEN: usize = 8;

/// A valid fence_kdump message: the node runs its kdump kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// The message version (always [`VERSION_1`] today).
    pub version: u32,
    /// True when the sender's byte order was big-endian (it sends its
    /// in-memory struct, so a big-endian node's bytes arrive reversed).
    pub big_endian: bool,
}

/// Why a datagram is not a fence_kdump message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// Not 8 bytes.
    #[error("a fence_kdump message is 8 bytes, this datagram has {0}")]
    Length(usize),
    /// The first word is not the magic number in either byte order.
    #[error("wrong magic number {0:#010x}")]
    Magic(u32),
    /// A version this protocol does not define.
    #[error("unknown fence_kdump message version {0}")]
    Version(u32),
}

/// Decodes one datagram. Either byte order is accepted (the sender writes
/// its native order); the version must be 1 in the same order as the magic.
pub fn decode(bytes: &[u8]) -> Result<Message, Malformed> {
    let Ok(raw) = <[u8; MESSAGE_LEN]>::try_from(bytes) else {
        return Err(Malformed::Length(bytes.len()));
    };
    let (head, tail) = (
        [raw[0], raw[1], raw[2], raw[3]],
        [raw[4], raw[5], raw[6], raw[7]],
    );
    let (version, big_endian) = if u32::from_le_bytes(head) == MAGIC {
        (u32::from_le_bytes(tail), false)
    } else if u32::from_be_bytes(head) == MAGIC {
        (u32::from_be_bytes(tail), true)
    } else {
        return Err(Malformed::Magic(u32::from_le_bytes(head)));
    };
    if version != VERSION_1 {
        return Err(Malformed::Version(version));
    }
    Ok(Message {
        version,
        big_endian,
    })
}

/// Encodes a version-1 message in little-endian order, as an x86 or arm64
/// node's `fence_kdump_send` sends it (for tests and the lab).
pub fn encode_v1() -> [u8; MESSAGE_LEN] {
    let mut b = [0u8; MESSAGE_LEN];
    b[..4].copy_from_slice(&MAGIC.to_le_bytes());
    b[4..].copy_from_slice(&VERSION_1.to_le_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_little_endian_message_decodes() {
        // What fence_kdump_send on x86-64 puts on the wire.
        let wire = [0x40, 0x2a, 0x30, 0x1b, 0x01, 0x00, 0x00, 0x00];
        assert_eq!(encode_v1(), wire);
        assert_eq!(
            decode(&wire),
            Ok(Message {
                version: 1,
                big_endian: false
            })
        );
    }

    #[test]
    fn a_big_endian_message_decodes() {
        let wire = [0x1b, 0x30, 0x2a, 0x40, 0x00, 0x00, 0x00, 0x01];
        assert_eq!(
            decode(&wire),
            Ok(Message {
                version: 1,
                big_endian: true
            })
        );
    }

    #[test]
    fn anything_else_is_refused_without_panic() {
        assert_eq!(decode(&[]), Err(Malformed::Length(0)));
        assert_eq!(decode(&[0; 9]), Err(Malformed::Length(9)));
        assert_eq!(decode(&[0; 8]), Err(Malformed::Magic(0)));
        let mut v2 = encode_v1();
        v2[4] = 2;
        assert_eq!(decode(&v2), Err(Malformed::Version(2)));
        // Mixed orders: a little-endian magic with a big-endian version 1.
        let mut mixed = encode_v1();
        mixed[4..].copy_from_slice(&1u32.to_be_bytes());
        assert_eq!(decode(&mixed), Err(Malformed::Version(0x0100_0000)));
        // Every short or long length, every byte value in the first word.
        for n in 0..64usize {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
            let _ = decode(&bytes);
        }
    }
}
