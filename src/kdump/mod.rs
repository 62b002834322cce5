//! The fence_kdump protocol, receiving side: how a node's kdump kernel
//! says "I am dumping" (fence-agents' `fence_kdump_send`), so that fencekit
//! can let a crash dump finish before it powers the node off.
//!
//! * [`codec`]: the message (bytes to a typed message, no I/O);
//! * [`listen`]: one UDP socket per run, messages handed to every waiter
//!   with their sender's address (the fleet decides which node they are from).
//!
//! Facts of the protocol (fence-agents 4.12, `agents/kdump/`): one UDP
//! datagram of 8 bytes, a 32-bit magic `0x1B302A40` then a 32-bit version
//! `1`, in the sending machine's byte order (the struct is sent as it is
//! in memory); default port 7410; `fence_kdump_send` repeats it every
//! `--interval` seconds (10 by default) for as long as the kdump kernel
//! runs, to every host named on its command line. The receiving agent
//! accepts a message only from the fenced node's own address and ignores
//! wrong magic numbers and versions.

pub mod codec;
pub mod listen;
