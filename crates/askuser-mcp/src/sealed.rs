//! The 2026-07-28 `requestState`: what a sealed state carries, the per-process key that seals it,
//! the nonces already redeemed, and the operating system's randomness behind keys, nonces and
//! tickets.

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use rmcp::model::RequestStateCodec;
use serde::{Deserialize, Serialize};

pub(crate) fn random_codec() -> RequestStateCodec {
    let mut key = vec![0; RequestStateCodec::MIN_KEY_LENGTH];
    random_bytes(&mut key);
    // The key has exactly the minimum length, which `try_new` accepts.
    RequestStateCodec::try_new(key)
        .unwrap_or_else(|_| unreachable!("a key of the minimum length is accepted"))
}

/// Fills `bytes` from the operating system's random source.
///
/// # Panics
///
/// When the operating system has no random source: a fixed key or nonce would let anyone forge
/// or replay a state, so there is no safe way on.
fn random_bytes(bytes: &mut [u8]) {
    if let Err(error) = getrandom::fill(bytes) {
        panic!("the operating system's random source failed: {error}");
    }
}

pub(crate) fn random_nonce() -> String {
    let mut bytes = [0u8; 16];
    random_bytes(&mut bytes);
    bytes.iter().fold(String::with_capacity(32), |mut hex, b| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// The nonces of redeemed states, oldest first.
#[derive(Default)]
pub(crate) struct Redeemed {
    pub(crate) nonces: HashSet<String>,
    pub(crate) order: VecDeque<(Instant, String)>,
}

/// What a 2026-07-28 `requestState` carries (signed, readable by the client: nothing secret).
#[derive(Serialize, Deserialize)]
pub(crate) struct State {
    /// One-time nonce: a state is redeemed once.
    pub(crate) nonce: String,
    /// 1 for the first form, 2 for the one asked again after a misfit.
    pub(crate) attempt: u8,
    /// The question's id in the [inbox](crate::AskUserServerBuilder::inbox), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) record: Option<String>,
}
