//! `GET /v1/usage/history?days=N`: one entry per UTC day, oldest first,
//! zero-filled; stored bytes as at each day's end (today: now); a day's
//! uploads and bandwidth its own, across the day boundary (the test clock
//! moved to the next days, the collector's readings taken between).

use super::*;
use crate::common::TestOptions;
use chrono::{Days, NaiveDate};
use std::time::Duration;

/// The account's history of `days` days with `key`: (date, storage,
/// bandwidth, uploads) per day.
async fn history(srv: &TestServer, key: &str, days: u32) -> Vec<(String, u64, u64, u64)> {
    let path = format!("/v1/usage/history?days={days}");
    let (status, body) = call(srv, Method::GET, &path, key, None).await;
    assert_eq!(status, 200, "{body}");
    body["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k}: {d}"));
            let date = d["date"].as_str().unwrap().to_string();
            (
                date,
                n("storage_bytes"),
                n("bandwidth_bytes"),
                n("upload_count"),
            )
        })
        .collect()
}

fn date(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// The test clock's day.
fn today(srv: &TestServer) -> NaiveDate {
    srv.clock.now().date_naive()
}

/// Waits until the collector has read `account`'s counters of today as
/// `uploads` uploads and `bandwidth` bytes sent in the period.
async fn read_by_collector(srv: &TestServer, account: &str, uploads: u64, bandwidth: u64) {
    let day = date(today(srv));
    let sql = format!(
        "SELECT COUNT(*) FROM usage_days WHERE account_id = '{account}' AND day = '{day}' \
         AND upload_total = {uploads} AND bandwidth_total = {bandwidth}"
    );
    srv.eventually(10, "the collector's reading", || {
        let n = srv.count(&sql);
        async move { n == 1 }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn days_are_zero_filled_and_split_at_midnight() {
    let srv = TestServer::start().await;
    let (account, key) = srv.new_account("history", "free").await;
    // To 01:00 of the next day (UTC): 23 hours before the next boundary.
    let now = srv.clock.now();
    let next = (now.date_naive() + Days::new(1))
        .and_hms_opt(1, 0, 0)
        .unwrap();
    let ahead = next.and_utc() - now;
    srv.clock.advance(ahead.to_std().unwrap());
    let d0 = today(&srv);
    let day = |n: i64| date(d0.checked_add_signed(chrono::Duration::days(n)).unwrap());

    // Day 0: two uploads, one download.
    let first = srv.upload_as(&key, "a.bin", vec![1; 100], &[]).await;
    assert_eq!(first.status(), 201);
    let first: Value = first.json().await.unwrap();
    let second = srv.upload_as(&key, "b.bin", vec![2; 50], &[]).await;
    assert_eq!(second.status(), 201);
    assert_eq!(
        history(&srv, &key, 3).await,
        [(day(-2), 0, 0, 0), (day(-1), 0, 0, 0), (day(0), 150, 0, 2)]
    );
    let got = crate::common::get_bytes(&srv.http, first["url"].as_str().unwrap()).await;
    assert_eq!(got.len(), 100);
    assert_eq!(
        history(&srv, &key, 1).await,
        [(day(0), 150, 100, 2)],
        "today is live"
    );
    read_by_collector(&srv, &account, 2, 100).await;

    // Day 1: one upload, one deletion; day 0 stays as it ended.
    srv.clock.advance(Duration::from_hours(24));
    assert_eq!(today(&srv).to_string(), day(1));
    let third = srv.upload_as(&key, "c.bin", vec![3; 30], &[]).await;
    assert_eq!(third.status(), 201);
    let a_id = first["id"].as_str().unwrap();
    assert_eq!(srv.delete_as(&key, a_id).await.status(), 200);
    assert_eq!(
        history(&srv, &key, 3).await,
        [
            (day(-1), 0, 0, 0),
            (day(0), 150, 100, 2),
            (day(1), 80, 0, 1)
        ]
    );
    // The month's counters go on (or start again on the 1st): day 1's
    // reading says 3 uploads in the period, or 1 in a new one.
    let day1_total = if day(1).ends_with("-01") { 1 } else { 3 };
    read_by_collector(
        &srv,
        &account,
        day1_total,
        if day1_total == 1 { 0 } else { 100 },
    )
    .await;

    // Two days on: a day without a reading is zeros, its storage carried.
    srv.clock.advance(Duration::from_hours(48));
    assert_eq!(
        history(&srv, &key, 4).await,
        [
            (day(0), 150, 100, 2),
            (day(1), 80, 0, 1),
            (day(2), 80, 0, 0),
            (day(3), 80, 0, 0)
        ]
    );
    // The default is 30 days; the longest 366, each day once, in order.
    let month = history_default(&srv, &key).await;
    assert_eq!(month.len(), 30);
    assert_eq!(month.last().unwrap().0, day(3));
    let year = history(&srv, &key, 366).await;
    assert_eq!(year.len(), 366);
    assert_eq!(year[0].0, day(3 - 365));
    for w in year.windows(2) {
        let earlier = NaiveDate::parse_from_str(&w[0].0, "%Y-%m-%d").unwrap();
        assert_eq!(date(earlier + Days::new(1)), w[1].0, "consecutive days");
    }
    let total: u64 = year.iter().map(|d| d.3).sum();
    assert_eq!(total, 3, "every upload on its day, once");

    // The default account saw none of it.
    let other = history(&srv, &srv.secret_key, 5).await;
    assert!(other.iter().all(|d| d.1 + d.2 + d.3 == 0), "{other:?}");
}

/// The history without `days`.
async fn history_default(srv: &TestServer, key: &str) -> Vec<(String, u64, u64, u64)> {
    let (status, body) = call(srv, Method::GET, "/v1/usage/history", key, None).await;
    assert_eq!(status, 200, "{body}");
    body["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["date"].as_str().unwrap().to_string(), 0, 0, 0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_days_is_refused_and_only_secret_keys_read_history() {
    let srv = TestServer::start().await;
    for bad in ["0", "367", "-1", "abc", "", "1.5", "%2B3", "99999999999"] {
        let path = format!("/v1/usage/history?days={bad}");
        let got = refused(&srv, Method::GET, &path, Some(&srv.secret_key), None).await;
        assert_eq!(got, (400, "bad_request".into()), "days={bad}");
    }
    only_secret_keys(&srv, Method::GET, "/v1/usage/history?days=7", None).await;
}

/// Readings no history reaches any more go, but the latest of them stays:
/// the base the days after it are measured from (on both databases). The
/// days are months back from the server's clock: the collector's own pass
/// (its readings of today, its pruning of what is past a year old) may run
/// at any time beside the test and touches neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_readings_are_pruned_to_a_base() {
    let srv = TestServer::start_with(TestOptions {
        reap_interval: Some(Duration::from_hours(1)),
        ..TestOptions::default()
    })
    .await;
    let meta = &srv.app.meta;
    let account = srv.account_id.as_str();
    let day = |days_ago: i64| {
        let at = srv.clock.now_ms() - days_ago * 86_400_000;
        chrono::DateTime::from_timestamp_millis(at)
            .unwrap()
            .format("%Y-%m-%d")
            .to_string()
    };
    let (first, second, cut) = (day(100), day(70), day(40));
    for d in [&first, &second] {
        assert_eq!(meta.snapshot_usage(d, &d[..7]).await.unwrap(), 1, "{d}");
    }
    let days = meta.usage_days(account, &day(90), &day(45)).await.unwrap();
    let seen: Vec<&str> = days.iter().map(|d| d.day.as_str()).collect();
    assert_eq!(seen, [&first, &second], "the base, then the day");
    assert_eq!(meta.prune_usage_days(&cut).await.unwrap(), 1);
    let days = meta.usage_days(account, &cut, &day(10)).await.unwrap();
    let seen: Vec<&str> = days.iter().map(|d| d.day.as_str()).collect();
    assert_eq!(seen, [&second], "the base stays");
}
