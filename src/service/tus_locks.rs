//! One turn at a time per resumable upload, on this node: the PATCHes and
//! terminations of an upload take its turn (`tus`); across nodes, its lease.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// One turn at a time per upload, on this node.
#[derive(Debug, Default)]
pub(crate) struct Locks {
    held: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
}

impl Locks {
    fn entry(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut held = self.held.lock().expect("locks");
        held.retain(|_, l| l.strong_count() > 0);
        if let Some(l) = held.get(id).and_then(Weak::upgrade) {
            l
        } else {
            let l = Arc::new(tokio::sync::Mutex::new(()));
            held.insert(id.to_string(), Arc::downgrade(&l));
            l
        }
    }

    /// The upload's turn, once the request holding it ends.
    pub(crate) async fn lock(&self, id: &str) -> tokio::sync::OwnedMutexGuard<()> {
        self.entry(id).lock_owned().await
    }

    /// The upload's turn, if no request holds it now.
    pub(crate) fn try_lock(&self, id: &str) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        self.entry(id).try_lock_owned().ok()
    }
}
