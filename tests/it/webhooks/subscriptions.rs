//! The `--event` filter, account scoping and a deleted webhook.

use super::*;
use crate::common::receiver::*;
use std::collections::BTreeSet;
use std::time::Duration;

/// `--event` narrows what is sent; files of another account never reach
/// this account's webhooks (and its own webhook, named by the account's
/// name, gets them); a deleted webhook gets nothing more; list never shows
/// a secret; an unknown event is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_filter_accounts_and_deleted_webhooks() {
    if !tools("event_filter_accounts_and_deleted_webhooks") {
        return;
    }
    let srv = TestServer::start().await;
    let target = Target::of(&srv);
    let (other_acc, other_key) = srv.new_account("other", "free").await;
    let only_deleted = Receiver::start(&RxOptions::default());
    let all = Receiver::start(&RxOptions::default());
    let gone = Receiver::start(&RxOptions::default());
    let other = Receiver::start(&RxOptions::default());
    let only_deleted_id = hook(&srv, &only_deleted, &[DELETED]);
    let all_id = hook(&srv, &all, &[]);
    let gone_id = hook(&srv, &gone, &[CREATED, DELETED, EXPIRED]);
    // The account by its name.
    let (other_id, secret) = target.create_webhook("other", &other.url(), &[]);
    other.set_secret(&secret);

    let refused = target.admin(&[
        "webhook",
        "create",
        "--account",
        &srv.account_id,
        "--url",
        &all.url(),
        "--event",
        "file.moved",
        "--json",
    ]);
    assert!(!refused.status.success(), "an unknown event was accepted");
    let refused = target.admin(&[
        "webhook",
        "create",
        "--account",
        &srv.account_id,
        "--url",
        "ftp://x/",
        "--json",
    ]);
    assert!(!refused.status.success(), "an ftp:// url was accepted");

    let listed = target.list_webhooks(None);
    let ids: BTreeSet<&str> = listed.iter().map(|w| s(&w["id"])).collect();
    assert_eq!(
        ids,
        [&only_deleted_id, &all_id, &gone_id, &other_id]
            .into_iter()
            .map(String::as_str)
            .collect(),
        "{listed:?}"
    );
    let of_other = target.list_webhooks(Some(&other_acc));
    assert_eq!(of_other.len(), 1, "{of_other:?}");
    assert_eq!(of_other[0]["id"], other_id.as_str());
    assert_eq!(of_other[0]["account"], other_acc.as_str());
    assert_eq!(of_other[0]["url"], other.url());

    let key = srv.secret_key.clone();
    let f1 = s(&upload(&srv, &key, "f1.txt", 10, &[]).await["id"]).to_string();
    let f2 = s(&upload(&srv, &key, "f2.txt", 20, &[]).await["id"]).to_string();
    delete(&srv, &key, &f1).await;
    let g1 = s(&upload(&srv, &other_key, "g1.txt", 30, &[]).await["id"]).to_string();
    delete(&srv, &other_key, &g1).await;

    let mine = [(CREATED, f1.as_str()), (CREATED, &f2), (DELETED, &f1)];
    all.wait_delivered(60, &mine).await;
    gone.wait_delivered(60, &mine).await;
    only_deleted.wait_delivered(60, &[(DELETED, &f1)]).await;
    other
        .wait_delivered(60, &[(CREATED, g1.as_str()), (DELETED, &g1)])
        .await;

    // Phase 2: `gone` deleted, then more events.
    target.admin_ok(&["webhook", "delete", &gone_id]);
    let ids: BTreeSet<String> = target
        .list_webhooks(None)
        .iter()
        .map(|w| s(&w["id"]).to_string())
        .collect();
    assert!(!ids.contains(&gone_id) && ids.len() == 3, "{ids:?}");
    let f3 = s(&upload(&srv, &key, "f3.txt", 40, &[]).await["id"]).to_string();
    delete(&srv, &key, &f2).await;
    delete(&srv, &key, &f3).await;
    all.wait_delivered(
        60,
        &[(CREATED, f3.as_str()), (DELETED, &f2), (DELETED, &f3)],
    )
    .await;
    only_deleted
        .wait_delivered(60, &[(DELETED, f2.as_str()), (DELETED, &f3)])
        .await;
    // Give a wrongly kept webhook time to show (the sender polls every second).
    tokio::time::sleep(Duration::from_secs(3)).await;

    let expect = |rx: &Receiver, want: &[(&str, &str)]| {
        let reqs = rx.requests();
        one_id_per_event(&reqs);
        let want: BTreeSet<(String, String)> = want
            .iter()
            .map(|(t, i)| (t.to_string(), i.to_string()))
            .collect();
        let got: BTreeSet<(String, String)> = reqs
            .iter()
            .map(|r| (s(&r["type"]).to_string(), s(&r["data_id"]).to_string()))
            .collect();
        assert_eq!(got, want, "requests:\n{}", summary(&reqs));
        for r in &reqs {
            assert!(is_ok(r), "{r}");
        }
    };
    expect(
        &all,
        &[
            (CREATED, &f1),
            (CREATED, &f2),
            (DELETED, &f1),
            (CREATED, &f3),
            (DELETED, &f2),
            (DELETED, &f3),
        ],
    );
    expect(
        &only_deleted,
        &[(DELETED, &f1), (DELETED, &f2), (DELETED, &f3)],
    );
    expect(&gone, &mine);
    expect(&other, &[(CREATED, &g1), (DELETED, &g1)]);
}
