//! In-process wake-ups: one [`Notify`] per watched id, created by the first watcher and removed
//! with the last, so 10,000 waiters cost 10,000 small entries and a wake touches only its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

#[derive(Debug, Default)]
pub(crate) struct Wakers {
    map: Mutex<HashMap<String, Arc<Notify>>>,
}

impl Wakers {
    fn map(&self) -> MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        // A panic while holding the lock leaves the map consistent (every operation is one call).
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers interest in `id`; wake-ups reach the returned subscription until it is dropped.
    pub(crate) fn subscribe(self: &Arc<Self>, id: &str) -> Subscription {
        let notify = Arc::clone(self.map().entry(id.to_owned()).or_default());
        Subscription { wakers: Arc::clone(self), id: id.to_owned(), notify }
    }

    /// Wakes every subscription to `id`.
    pub(crate) fn wake(&self, id: &str) {
        if let Some(notify) = self.map().get(id) {
            notify.notify_waiters();
        }
    }

    #[cfg(feature = "postgres")]
    /// Wakes every subscription (after wake-ups may have been lost, e.g. a dropped connection).
    pub(crate) fn wake_all(&self) {
        for notify in self.map().values() {
            notify.notify_waiters();
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether anyone watches an id.
    #[cfg(feature = "sqlite")]
    pub(crate) fn is_empty(&self) -> bool {
        self.map().is_empty()
    }
}

/// Interest in one id. Await [`Notify::notified`] on [`notify`](Self::notify), enabled *before*
/// reading the record, so a wake between the read and the wait is not lost.
#[derive(Debug)]
pub(crate) struct Subscription {
    wakers: Arc<Wakers>,
    id: String,
    notify: Arc<Notify>,
}

impl Subscription {
    pub(crate) fn notify(&self) -> &Notify {
        &self.notify
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut map = self.wakers.map();
        // Under the lock nobody can clone the entry, so two strong counts (the map's and ours)
        // mean this is the last subscription.
        if Arc::strong_count(&self.notify) == 2 {
            map.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_as_long_as_their_subscriptions() {
        let wakers = Arc::new(Wakers::default());
        let a = wakers.subscribe("q");
        let b = wakers.subscribe("q");
        let c = wakers.subscribe("r");
        assert_eq!(wakers.len(), 2);
        drop(a);
        assert_eq!(wakers.len(), 2);
        drop(b);
        assert_eq!(wakers.len(), 1);
        drop(c);
        assert_eq!(wakers.len(), 0);
    }

    #[tokio::test]
    async fn a_wake_between_check_and_wait_is_not_lost() {
        let wakers = Arc::new(Wakers::default());
        let sub = wakers.subscribe("q");
        let notified = sub.notify().notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        wakers.wake("q");
        wakers.wake("other");
        tokio::time::timeout(std::time::Duration::from_secs(5), notified).await.expect("woken");
    }
}
