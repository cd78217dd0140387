use super::*;
use std::collections::HashMap;
use tokio::sync::mpsc;

const LONG: Duration = Duration::from_hours(1);

/// Requests queued in the order given (each enqueued before the next is),
/// each reporting its name when admitted and holding its place until
/// released; the names in the order they were admitted, each released as
/// soon as it is.
async fn admission_order(queue: &Arc<RenderQueue>, requests: &[(&str, u64)]) -> Vec<String> {
    let (admitted_tx, mut admitted) = mpsc::unbounded_channel();
    let mut releases = HashMap::new();
    for (i, &(account, bytes)) in requests.iter().enumerate() {
        let name = format!("{account}{i}");
        let (release, held) = oneshot::channel::<()>();
        releases.insert(name.clone(), release);
        let mut place = queue.enter(account).unwrap();
        let tx = admitted_tx.clone();
        tokio::spawn(async move {
            place.admit(bytes, LONG).await.unwrap();
            tx.send(name).unwrap();
            let _ = held.await;
            drop(place);
        });
        // The task runs to its wait: it is in the queue before the next.
        tokio::task::yield_now().await;
    }
    let mut order = Vec::new();
    while order.len() < requests.len() {
        let name = admitted.recv().await.unwrap();
        releases.remove(&name).unwrap().send(()).unwrap();
        order.push(name);
    }
    order
}

/// One slot: while a and b flood, c's one request is admitted next, and
/// then a and b take turns; no account is admitted twice in a row while
/// another waits.
#[tokio::test]
async fn accounts_take_turns_and_a_fresh_one_goes_first() {
    let queue = Arc::new(RenderQueue::new(1, 1 << 30, 64));
    // a holds the slot; a's and b's floods queue behind it, then c's one.
    let mut running = queue.enter("a").unwrap();
    running.admit(10, LONG).await.unwrap();
    let (tx, rx) = oneshot::channel::<Vec<String>>();
    let q = Arc::clone(&queue);
    tokio::spawn(async move {
        let mut requests = vec![("a", 10); 4];
        requests.extend([("b", 10); 4]);
        requests.push(("c", 10));
        tx.send(admission_order(&q, &requests).await).unwrap();
    });
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    drop(running);
    let order = rx.await.unwrap();
    // b has run nothing yet: first; then c (nothing running); then turns.
    assert_eq!(
        order,
        ["b4", "c8", "a0", "b5", "a1", "b6", "a2", "b7", "a3"],
        "{order:?}"
    );
    assert_eq!(queue.used(), (0, 0));
}

/// Two slots, the second account arriving while the first floods: after
/// the renders running, the newcomer is next.
#[tokio::test]
async fn a_third_account_waits_only_for_the_renders_running() {
    let queue = Arc::new(RenderQueue::new(2, 1 << 30, 64));
    let mut a = queue.enter("a").unwrap();
    a.admit(1, LONG).await.unwrap();
    let mut b = queue.enter("b").unwrap();
    b.admit(1, LONG).await.unwrap();
    let mut flood = Vec::new();
    for account in ["a", "b", "a", "b", "a", "b"] {
        let mut place = queue.enter(account).unwrap();
        flood.push(tokio::spawn(async move {
            place.admit(1, LONG).await.unwrap();
            place
        }));
        tokio::task::yield_now().await;
    }
    let mut c = queue.enter("c").unwrap();
    let fresh = tokio::spawn(async move {
        c.admit(1, LONG).await.unwrap();
        c
    });
    tokio::task::yield_now().await;
    // One running render ends: its slot goes to c, not to a flood.
    drop(a);
    let c = tokio::time::timeout(Duration::from_secs(5), fresh)
        .await
        .expect("c is admitted when the first render ends")
        .unwrap();
    assert_eq!(queue.used().0, 2);
    assert!(
        flood.iter().all(|t| !t.is_finished()),
        "no flood render went first"
    );
    drop((b, c));
    for t in flood {
        drop(t.await.unwrap());
    }
    assert_eq!(queue.used(), (0, 0));
}

/// The bytes: a render waits while the running ones leave too little of
/// the budget (slots free or not), in order; more than the budget is
/// refused at once.
#[tokio::test]
async fn renders_wait_for_bytes_and_over_the_budget_is_refused() {
    let queue = Arc::new(RenderQueue::new(4, 100, 8));
    let mut big = queue.enter("a").unwrap();
    big.admit(60, LONG).await.unwrap();
    let mut next = queue.enter("b").unwrap();
    let waiting = tokio::spawn(async move {
        next.admit(50, LONG).await.unwrap();
        next
    });
    tokio::task::yield_now().await;
    // A small one queued after it does not overtake it.
    let mut small = queue.enter("c").unwrap();
    let small_waits = tokio::spawn(async move {
        small.admit(10, LONG).await.unwrap();
        small
    });
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished() && !small_waits.is_finished());
    assert_eq!(queue.used(), (1, 60));
    drop(big);
    let next = waiting.await.unwrap();
    let small = small_waits.await.unwrap();
    assert_eq!(queue.used(), (2, 60));
    let mut over = queue.enter("d").unwrap();
    assert_eq!(
        over.admit(101, LONG).await,
        Err(Refused::OverBudget {
            bytes: 101,
            budget: 100
        })
    );
    drop((next, small, over));
    assert_eq!(queue.used(), (0, 0));
}

/// Waiting is bounded per account and per node, but an account with none
/// waiting always gets a place; one that waits too long is busy, and its
/// place goes.
#[tokio::test(start_paused = true)]
async fn waiting_is_bounded_and_timed() {
    let queue = Arc::new(RenderQueue::new(1, 100, 2));
    let mut running = queue.enter("a").unwrap();
    running.admit(1, LONG).await.unwrap();
    let a: Vec<_> = (0..2).map(|_| queue.enter("a").unwrap()).collect();
    assert_eq!(queue.enter("a").unwrap_err(), Refused::Busy);
    let b = queue.enter("b").unwrap();
    assert_eq!(queue.enter("b").unwrap_err(), Refused::Busy);
    drop((a, b));
    let mut late = queue.enter("b").unwrap();
    let started = tokio::time::Instant::now();
    assert_eq!(
        late.admit(1, Duration::from_secs(5)).await,
        Err(Refused::Busy)
    );
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    drop(late);
    drop(running);
    assert_eq!(queue.used(), (0, 0));
    assert!(queue.lock().accounts.is_empty() && queue.lock().ready.is_empty());
}

/// A request that goes away while queued leaves the queue; the next one
/// is admitted.
#[tokio::test]
async fn a_request_gone_while_queued_leaves_no_trace() {
    let queue = Arc::new(RenderQueue::new(1, 100, 8));
    let mut running = queue.enter("a").unwrap();
    running.admit(1, LONG).await.unwrap();
    let mut gone = queue.enter("b").unwrap();
    let task = tokio::spawn(async move { gone.admit(1, LONG).await });
    tokio::task::yield_now().await;
    task.abort();
    let _ = task.await;
    let mut next = queue.enter("c").unwrap();
    let next_task = tokio::spawn(async move {
        next.admit(1, LONG).await.unwrap();
        next
    });
    tokio::task::yield_now().await;
    drop(running);
    drop(next_task.await.unwrap());
    assert_eq!(queue.used(), (0, 0));
    assert_eq!(queue.lock().waiting, 0);
}
