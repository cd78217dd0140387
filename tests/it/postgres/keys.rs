//! Keys remembered across nodes (`db/keys.rs`, `db/postgres/node.rs`): a
//! node answers a key it read in the last second from memory, yet a key
//! revoked, or an account changed, on another node is seen as soon as that
//! node's notice arrives, not a second later.

use super::*;
use filestore::testing::db::{KeyRecord, UploadPolicy};
use filestore::testing::domain::ids;
use std::time::{Duration, Instant};

/// Until `seen` holds of what `store` answers for the key of `hash`, or
/// `until`; whether it came to hold.
async fn comes_to(
    store: &PgStore,
    hash: [u8; 32],
    until: Instant,
    seen: impl Fn(&Option<(KeyRecord, Account)>) -> bool,
) -> bool {
    while Instant::now() < until {
        if seen(&store.key_by_hash(hash).await.unwrap()) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_on_one_node_reaches_what_another_remembers_at_once() {
    let Some((_dir, stores)) = nodes(2).await else {
        return skipped();
    };
    let (a, b) = (&stores[0], &stores[1]);
    let acc = account(&**a).await;
    let key = KeyRecord {
        id: ids::key_id(),
        account_id: acc.clone(),
        kind: ids::KeyKind::Secret,
        name: None,
        origins: vec![],
        created_at: 1,
        revoked_at: None,
        policy: UploadPolicy::default(),
    };
    a.create_key(key.clone(), [7; 32]).await.unwrap();
    // Each change must reach node a well before the second for which it
    // would answer what it read from memory.
    let soon = |read: Instant| read + Duration::from_millis(700);

    let read = Instant::now();
    let found = a.key_by_hash([7; 32]).await.unwrap().expect("a live key");
    assert!(!found.1.grace_period);
    b.set_account(&acc, None, Some(true)).await.unwrap();
    assert!(
        comes_to(a, [7; 32], soon(read), |f| f
            .as_ref()
            .is_some_and(|f| f.1.grace_period))
        .await,
        "node a sees the grace period set on node b"
    );

    let read = Instant::now();
    assert!(a.key_by_hash([7; 32]).await.unwrap().is_some());
    assert!(b.revoke_key(&key.id, 2).await.unwrap());
    assert!(
        comes_to(a, [7; 32], soon(read), Option::is_none).await,
        "node a refuses the key revoked on node b"
    );
}
