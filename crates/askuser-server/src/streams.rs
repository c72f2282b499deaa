//! The pages' event streams, budgeted apart from every other request. A stream holds its
//! connection until its question settles and is never closed for room (it is being answered), so
//! without a budget one page link, which every notice and chat message carries, could hold every
//! connection of the server (issue 36.1: 4,200 streams on one link refused `/healthz`, asks,
//! answers, waits and cancels).
//!
//! - At most [`PER_QUESTION`] streams on one question, and [`PER_CLIENT`] from one client
//!   address (an IPv4 address, or an IPv6 /64, as the login throttle counts them).
//! - All streams together take at most half the connection cap: the other half stays for short
//!   requests and the askers' waits.
//!
//! A stream over budget is refused with `429` and `Retry-After`; the page then works as it does
//! without its script (it shows what it showed, and answering it works).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::throttle::{Peer, client_key};

/// The most event streams open on one question: a person's tabs and devices.
pub(crate) const PER_QUESTION: usize = 8;

/// The most event streams open from one client address.
pub(crate) const PER_CLIENT: usize = 32;

/// How long a refused stream is told to wait before trying again, in seconds.
const RETRY_AFTER_SECS: u32 = 30;

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    questions: HashMap<String, usize>,
    clients: HashMap<IpAddr, usize>,
}

/// The open event streams, counted.
#[derive(Debug)]
pub(crate) struct StreamBudget {
    /// The most streams open at once: half the connection cap (at least 1).
    max: usize,
    counts: Mutex<Counts>,
}

/// One open stream, counted until dropped (when its response body ends or its client goes).
#[derive(Debug)]
pub(crate) struct StreamPermit {
    budget: Arc<StreamBudget>,
    question: Option<String>,
    client: Option<IpAddr>,
}

impl StreamBudget {
    /// A budget of half of `max_connections`.
    pub(crate) fn new(max_connections: usize) -> Self {
        Self { max: (max_connections / 2).max(1), counts: Mutex::default() }
    }

    /// Counts one more stream on `question` (none for a list's stream) from `peer` (none in
    /// process), or `Err`: over budget (its response is the `429` to send instead).
    pub(crate) fn open(
        self: &Arc<Self>,
        question: Option<&str>,
        peer: Option<Peer>,
    ) -> Result<StreamPermit, Refused> {
        let client = peer.map(|Peer(addr)| client_key(addr.ip()));
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let on_question = question.map_or(0, |id| counts.questions.get(id).copied().unwrap_or(0));
        let from_client = client.map_or(0, |ip| counts.clients.get(&ip).copied().unwrap_or(0));
        if counts.total >= self.max || on_question >= PER_QUESTION || from_client >= PER_CLIENT {
            drop(counts);
            tracing::warn!(
                total = self.max,
                per_question = PER_QUESTION,
                per_client = PER_CLIENT,
                "an event stream was refused: over its budget"
            );
            return Err(Refused);
        }
        counts.total += 1;
        if let Some(id) = question {
            *counts.questions.entry(id.to_owned()).or_default() += 1;
        }
        if let Some(ip) = client {
            *counts.clients.entry(ip).or_default() += 1;
        }
        Ok(StreamPermit { budget: Arc::clone(self), question: question.map(ToOwned::to_owned), client })
    }

    #[cfg(test)]
    fn open_now(&self) -> usize {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner).total
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut counts = self.budget.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(1);
        if let Some(id) = &self.question
            && let Some(n) = counts.questions.get_mut(id)
        {
            *n -= 1;
            if *n == 0 {
                counts.questions.remove(id);
            }
        }
        if let Some(ip) = &self.client
            && let Some(n) = counts.clients.get_mut(ip)
        {
            *n -= 1;
            if *n == 0 {
                counts.clients.remove(ip);
            }
        }
    }
}

/// A stream over its budget: `429 Too Many Requests` with `Retry-After`.
#[derive(Debug)]
pub(crate) struct Refused;

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response =
            (StatusCode::TOO_MANY_REQUESTS, "too many event streams: try again later\n").into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(ip: &str) -> Peer {
        Peer(std::net::SocketAddr::new(ip.parse().unwrap(), 1))
    }

    #[test]
    fn streams_are_counted_per_question_per_client_and_in_all() {
        let budget = Arc::new(StreamBudget::new(1000));
        let on_one: Vec<_> = (0..PER_QUESTION)
            .map(|i| budget.open(Some("q"), Some(peer(&format!("10.0.0.{i}")))).unwrap())
            .collect();
        assert_eq!(budget.open(Some("q"), Some(peer("10.0.1.1"))).unwrap_err().into_response().status(), 429);
        let elsewhere: Vec<_> = (0..PER_CLIENT)
            .map(|i| budget.open(Some(&format!("r{i}")), Some(peer("10.0.2.1"))).unwrap())
            .collect();
        assert_eq!(budget.open(Some("s"), Some(peer("10.0.2.1"))).unwrap_err().into_response().status(), 429);
        // One IPv6 host, many addresses in its /64: one client.
        let v6: Vec<_> = (0..PER_CLIENT)
            .map(|i| budget.open(None, Some(peer(&format!("2001:db8::{i:x}")))).unwrap())
            .collect();
        assert!(budget.open(None, Some(peer("2001:db8::ffff"))).is_err());
        drop(on_one);
        assert!(budget.open(Some("q"), Some(peer("10.0.1.1"))).is_ok(), "a closed stream makes room");
        drop((elsewhere, v6));
        assert_eq!(budget.open_now(), 0, "every permit dropped");

        let small = Arc::new(StreamBudget::new(6));
        let three: Vec<_> =
            (0..3).map(|i| small.open(None, Some(peer(&format!("10.1.0.{i}")))).unwrap()).collect();
        assert!(small.open(None, Some(peer("10.1.0.9"))).is_err(), "half the connection cap at most");
        drop(three);
    }
}
