//! Login attempts per client: a token bucket for each client address, so that nobody can try
//! API tokens at the speed of the network.
//!
//! A client (an IPv4 address, or an IPv6 /64, which one host can rotate through) may try
//! [`BURST`] logins at once, then one more every [`REFILL`]. The table of clients is bounded:
//! when it is full, clients whose bucket has refilled are forgotten, and if none has, the
//! oldest entry goes.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// Login attempts a client may make at once.
pub(crate) const BURST: u32 = 10;

/// Time for one more attempt once the burst is spent.
pub(crate) const REFILL: Duration = Duration::from_secs(6);

/// The most clients remembered.
const MAX_CLIENTS: usize = 10_000;

/// The client's address, put on each request by the accept loop (absent in process).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub(crate) SocketAddr);

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The login attempts of every client.
#[derive(Debug, Default)]
pub(crate) struct LoginThrottle {
    clients: Mutex<HashMap<IpAddr, Bucket>>,
}

impl LoginThrottle {
    /// Takes one attempt for `peer`: `Ok` when it may try, else `Err(wait)`, how long until it
    /// may. A request without an address (in process) is never throttled.
    pub(crate) fn attempt(&self, peer: Option<Peer>) -> Result<(), Duration> {
        let Some(Peer(addr)) = peer else { return Ok(()) };
        let key = client_key(addr.ip());
        let now = Instant::now();
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if clients.len() >= MAX_CLIENTS && !clients.contains_key(&key) {
            clients.retain(|_, bucket| refilled(*bucket, now) < f64::from(BURST));
            if clients.len() >= MAX_CLIENTS
                && let Some(oldest) = clients.iter().min_by_key(|(_, b)| b.at).map(|(k, _)| *k)
            {
                clients.remove(&oldest);
            }
        }
        let bucket = clients.entry(key).or_insert(Bucket { tokens: f64::from(BURST), at: now });
        let tokens = refilled(*bucket, now);
        if tokens >= 1.0 {
            *bucket = Bucket { tokens: tokens - 1.0, at: now };
            Ok(())
        } else {
            *bucket = Bucket { tokens, at: now };
            Err(REFILL.mul_f64(1.0 - tokens))
        }
    }
}

impl LoginThrottle {
    /// Gives back the attempt `peer` just took (its token was right).
    pub(crate) fn refund(&self, peer: Option<Peer>) {
        let Some(Peer(addr)) = peer else { return };
        let now = Instant::now();
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bucket) = clients.get_mut(&client_key(addr.ip())) {
            *bucket = Bucket { tokens: (refilled(*bucket, now) + 1.0).min(f64::from(BURST)), at: now };
        }
    }
}

fn refilled(bucket: Bucket, now: Instant) -> f64 {
    let earned = now.saturating_duration_since(bucket.at).as_secs_f64() / REFILL.as_secs_f64();
    (bucket.tokens + earned).min(f64::from(BURST))
}

/// An IPv4 address as is (an IPv4-mapped IPv6 one too); an IPv6 address by its /64.
pub(crate) fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                IpAddr::V4(v4)
            } else {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(text: &str) -> Option<Peer> {
        text.parse().ok().map(Peer)
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_gets_a_burst_then_one_attempt_per_refill() {
        let throttle = LoginThrottle::default();
        for _ in 0..BURST {
            throttle.attempt(peer("192.0.2.1:1")).unwrap();
        }
        let wait = throttle.attempt(peer("192.0.2.1:2")).unwrap_err();
        assert_eq!(wait, REFILL);
        // Another client is not held back, nor is a request without an address.
        throttle.attempt(peer("192.0.2.2:1")).unwrap();
        throttle.attempt(None).unwrap();
        tokio::time::advance(REFILL).await;
        throttle.attempt(peer("192.0.2.1:3")).unwrap();
        assert!(throttle.attempt(peer("192.0.2.1:3")).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn an_ipv6_host_is_one_client_across_its_64() {
        let throttle = LoginThrottle::default();
        for n in 0..BURST {
            throttle.attempt(peer(&format!("[2001:db8:1:2::{n:x}]:1"))).unwrap();
        }
        assert!(throttle.attempt(peer("[2001:db8:1:2:ffff::1]:1")).is_err());
        throttle.attempt(peer("[2001:db8:1:3::1]:1")).unwrap();
    }
}
