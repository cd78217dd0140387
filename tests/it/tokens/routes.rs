//! `POST/GET/DELETE /v1/upload-tokens`: the record's shape and defaults,
//! every bad field (400, no token made), who may call them (a public key
//! 403, a token 401, another account 404), revocation, and the secret kept
//! only as a hash.

use super::*;

both_stores!(
    create_get_delete_have_their_shapes_and_defaults,
    each_bad_field_is_a_400_and_makes_no_token,
    only_a_secret_key_manages_tokens,
    the_secret_is_never_stored,
);

fn hex_of(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn ms(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap_or_else(|e| panic!("{rfc3339}: {e}"))
        .timestamp_millis()
}

async fn create_get_delete_have_their_shapes_and_defaults(b: Backend) {
    let srv = server(b).await;
    let before = srv.clock.now_ms();
    let t = token(&srv, json!({})).await;
    let rec = &t.record;
    // Shapes: ut_ + 24 hex, upt_ + 64 hex (256 bits), url with the secret.
    assert!(
        t.id.strip_prefix("ut_").is_some_and(|h| hex_of(h, 24)),
        "{}",
        t.id
    );
    assert!(
        t.token.strip_prefix("upt_").is_some_and(|h| hex_of(h, 64)),
        "{}",
        t.token
    );
    assert_eq!(
        t.url,
        format!("{}/v1/upload?token={}", srv.base_url, t.token)
    );
    // Defaults: one upload, an hour, no policy.
    assert_eq!(rec["max_uploads"], 1);
    assert_eq!(rec["uploads_left"], 1);
    assert!(rec.get("revoked_at").is_none(), "{rec}");
    let created = ms(rec["created_at"].as_str().unwrap());
    let expires = ms(rec["expires_at"].as_str().unwrap());
    assert!(
        (before - 2000..=srv.clock.now_ms() + 2000).contains(&created),
        "created_at {created} vs now {before}"
    );
    assert!(
        (expires - created - 3_600_000).abs() <= 2000,
        "expires_at is created_at + 3600 s: {rec}"
    );
    assert_eq!(
        rec["policy"],
        json!({
            "folder": null, "max_size": null, "types": [], "private": false,
            "file_expires": null, "metadata": {}, "replace": false
        })
    );
    // Two tokens never share an id or a secret.
    let t2 = token(&srv, json!({})).await;
    assert_ne!(t.id, t2.id);
    assert_ne!(t.token, t2.token);
    // GET: the same record without the secret (no token, no url).
    let got = token_record(&srv, &t.id).await;
    assert!(got.get("token").is_none(), "GET shows no token: {got}");
    assert!(got.get("url").is_none(), "GET shows no url: {got}");
    let mut without = rec.clone();
    without.as_object_mut().unwrap().remove("token");
    without.as_object_mut().unwrap().remove("url");
    assert_eq!(got, without);
    assert!(!got.to_string().contains(&t.token[4..]));

    // Every field given: echoed in the policy.
    let full = token(
        &srv,
        json!({
            "folder": "inbox/2026",
            "max_size": 5000,
            "types": ["image/png", "IMAGE/*", "application/pdf"],
            "max_uploads": 1000,
            "expires_in": 86400,
            "private": true,
            "file_expires": "7d",
            "metadata": {"source": "form", "tenant": "t-1"}
        }),
    )
    .await;
    let r = &full.record;
    assert_eq!(r["max_uploads"], 1000);
    assert_eq!(r["uploads_left"], 1000);
    assert!(
        (ms(r["expires_at"].as_str().unwrap())
            - ms(r["created_at"].as_str().unwrap())
            - 86_400_000)
            .abs()
            <= 2000
    );
    let p = &r["policy"];
    assert_eq!(p["folder"], "inbox/2026");
    assert_eq!(p["max_size"], 5000);
    let types: Vec<&str> = p["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(types.contains(&"image/png") && types.contains(&"application/pdf"));
    assert!(
        types.contains(&"image/*"),
        "types are kept lowercase: {types:?}"
    );
    assert_eq!(p["private"], true);
    assert_eq!(p["file_expires"], 7 * 86_400);
    assert_eq!(p["metadata"], json!({"source": "form", "tenant": "t-1"}));
    assert_eq!(token_record(&srv, &full.id).await["policy"], *p);
    // file_expires as seconds; max_size the plan's at most, inclusive.
    let secs = token(
        &srv,
        json!({"file_expires": 3600, "max_size": PLAN_MAX, "expires_in": 1, "max_uploads": 1}),
    )
    .await;
    assert_eq!(secs.record["policy"]["file_expires"], 3600);
    assert_eq!(secs.record["policy"]["max_size"], PLAN_MAX);

    // DELETE: 200 {"success": true}, revoked at once; then it is gone from
    // the API (GET and DELETE 404); unknown ids 404.
    let r = delete_token_as(&srv, &srv.secret_key, &t.id).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"success": true}));
    refused(
        srv.http
            .get(srv.url(&format!("/v1/upload-tokens/{}", t.id)))
            .bearer_auth(&srv.secret_key)
            .send()
            .await
            .unwrap(),
        404,
        "not_found",
    )
    .await;
    refused(
        delete_token_as(&srv, &srv.secret_key, &t.id).await,
        404,
        "not_found",
    )
    .await;
    let r = upload_with(&srv, &t.token, Via::Query, "a.txt", b"a".to_vec(), &[]).await;
    refused(r, 401, "unauthorized").await;
    let unknown = format!("ut_{}", "0".repeat(24));
    for r in [
        delete_token_as(&srv, &srv.secret_key, &unknown).await,
        srv.http
            .get(srv.url(&format!("/v1/upload-tokens/{unknown}")))
            .bearer_auth(&srv.secret_key)
            .send()
            .await
            .unwrap(),
        srv.http
            .get(srv.url("/v1/upload-tokens/not-an-id"))
            .bearer_auth(&srv.secret_key)
            .send()
            .await
            .unwrap(),
    ] {
        refused(r, 404, "not_found").await;
    }
    // The other token is untouched.
    assert_eq!(token_record(&srv, &t2.id).await["uploads_left"], 1);
    upload_ok_with(&srv, &t2.token, Via::Bearer, "b.txt", b"b".to_vec(), &[]).await;
}

async fn each_bad_field_is_a_400_and_makes_no_token(b: Backend) {
    let srv = server(b).await;
    let many_types: Vec<String> = (0..33).map(|i| format!("image/x-t{i}")).collect();
    let seventeen: serde_json::Map<String, Value> =
        (0..17).map(|i| (format!("k{i:02}"), json!("v"))).collect();
    let cases: Vec<(&str, Value)> = vec![
        ("max_uploads 0", json!({"max_uploads": 0})),
        ("max_uploads 1001", json!({"max_uploads": 1001})),
        ("max_uploads -1", json!({"max_uploads": -1})),
        ("max_uploads a string", json!({"max_uploads": "5"})),
        ("expires_in 0", json!({"expires_in": 0})),
        ("expires_in 86401", json!({"expires_in": 86401})),
        ("max_size 0", json!({"max_size": 0})),
        (
            "max_size over the plan's",
            json!({"max_size": PLAN_MAX + 1}),
        ),
        ("a type without a subtype", json!({"types": ["png"]})),
        ("a type with an empty subtype", json!({"types": ["image/"]})),
        ("*/*", json!({"types": ["*/*"]})),
        ("a type with a space", json!({"types": ["image/p ng"]})),
        ("types as a string", json!({"types": "image/png"})),
        ("33 types", json!({ "types": many_types })),
        (
            "an upper-case metadata key",
            json!({"metadata": {"Bad": "x"}}),
        ),
        (
            "a metadata key with a dot",
            json!({"metadata": {"a.b": "x"}}),
        ),
        ("a number metadata value", json!({"metadata": {"a": 1}})),
        (
            "17 metadata keys",
            json!({ "metadata": Value::Object(seventeen) }),
        ),
        (
            "metadata over 4 KiB",
            json!({"metadata": {"a": "x".repeat(4100)}}),
        ),
        ("a bad folder", json!({"folder": "../etc"})),
        (
            "a folder with a control character",
            json!({"folder": "has\ttab"}),
        ),
        ("file_expires forever", json!({"file_expires": "forever"})),
        ("file_expires 0", json!({"file_expires": 0})),
        ("private a string", json!({"private": "yes"})),
        ("an unknown field", json!({"max_upload": 5})),
        (
            "another unknown field",
            json!({"origin": "https://x.example"}),
        ),
        ("not an object", json!(["folder"])),
    ];
    for (what, body) in &cases {
        let r = create_token_as(&srv, &srv.secret_key, body).await;
        assert_eq!(
            code_of(r).await,
            (400, "bad_request".into()),
            "{what}: {body}"
        );
    }
    // Not JSON at all.
    let r = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&srv.secret_key)
        .header("content-type", "application/json")
        .body("{max_uploads: 5")
        .send()
        .await
        .unwrap();
    refused(r, 400, "bad_request").await;
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM upload_tokens"),
        0,
        "no refused request made a token"
    );
    // The edges that pass.
    for body in [
        json!({"max_uploads": 1, "expires_in": 1}),
        json!({"max_uploads": 1000, "expires_in": 86400}),
        json!({"max_size": 1}),
        json!({"types": (0..32).map(|i| format!("image/x-t{i}")).collect::<Vec<_>>()}),
    ] {
        token(&srv, body).await;
    }
    // Every field is optional, the body too (none, or JSON null).
    for body in ["", "null"] {
        let r = srv
            .http
            .post(srv.url("/v1/upload-tokens"))
            .bearer_auth(&srv.secret_key)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "body {body:?}");
    }
    assert_eq!(srv.count("SELECT COUNT(*) FROM upload_tokens"), 6);
}

async fn only_a_secret_key_manages_tokens(b: Backend) {
    let srv = server(b).await;
    let t = token(&srv, json!({"max_uploads": 3})).await;
    // A public key (from its own origin): 403 on each route.
    let pk = srv.new_key("public", &[ORIGIN]).await;
    let r = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&pk)
        .header("origin", ORIGIN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    refused(r, 403, "forbidden").await;
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = srv
            .http
            .request(
                method.clone(),
                srv.url(&format!("/v1/upload-tokens/{}", t.id)),
            )
            .bearer_auth(&pk)
            .header("origin", ORIGIN)
            .send()
            .await
            .unwrap();
        refused(r, 403, "forbidden").await;
    }
    // A token: 401 (it can do nothing but upload), as Bearer or ?token=.
    let r = create_token_as(&srv, &t.token, &json!({})).await;
    refused(r, 401, "unauthorized").await;
    let r = srv
        .http
        .post(format!(
            "{}?token={}",
            srv.url("/v1/upload-tokens"),
            t.token
        ))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    refused(r, 401, "unauthorized").await;
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = srv
            .http
            .request(
                method.clone(),
                srv.url(&format!("/v1/upload-tokens/{}", t.id)),
            )
            .bearer_auth(&t.token)
            .send()
            .await
            .unwrap();
        refused(r, 401, "unauthorized").await;
    }
    // No key: 401.
    let r = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    refused(r, 401, "unauthorized").await;
    // Another account's secret key: 404 on GET and DELETE, and the token
    // is not revoked by it.
    let (_, other) = srv.new_account("other", "free").await;
    let (status, body) = srv
        .get_json(&other, &format!("/v1/upload-tokens/{}", t.id))
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "not_found");
    refused(delete_token_as(&srv, &other, &t.id).await, 404, "not_found").await;
    let rec = token_record(&srv, &t.id).await;
    assert!(rec.get("revoked_at").is_none(), "{rec}");
    assert_eq!(rec["uploads_left"], 3);
    // Another secret key of the same account manages it.
    let sk2 = srv.new_key("secret", &[]).await;
    let (status, _) = srv
        .get_json(&sk2, &format!("/v1/upload-tokens/{}", t.id))
        .await;
    assert_eq!(status, 200);
    // The other account's token uploads into the other account only.
    let theirs = {
        let r = create_token_as(&srv, &other, &json!({})).await;
        assert_eq!(r.status(), 201);
        r.json::<Value>().await.unwrap()
    };
    let f = upload_ok_with(
        &srv,
        theirs["token"].as_str().unwrap(),
        Via::Query,
        "theirs.txt",
        b"t".to_vec(),
        &[],
    )
    .await;
    assert_eq!(listed(&srv, "").await.len(), 0, "not in this account");
    let (status, _) = srv
        .get_json(&other, &format!("/v1/files/{}", f["id"].as_str().unwrap()))
        .await;
    assert_eq!(status, 200);
    // A malformed or unknown token: 401.
    for bogus in [
        "upt_".to_string(),
        format!("upt_{}", "0".repeat(64)),
        format!("{}0", t.token),
        t.token.to_uppercase(),
    ] {
        let r = upload_with(&srv, &bogus, Via::Query, "a.txt", b"a".to_vec(), &[]).await;
        refused(r, 401, "unauthorized").await;
        let r = upload_with(&srv, &bogus, Via::Bearer, "a.txt", b"a".to_vec(), &[]).await;
        refused(r, 401, "unauthorized").await;
    }
}

/// The database holds the token's hash, never the token: the SQLite file's
/// bytes (and its WAL), or every column of every PostgreSQL row, searched
/// for it.
async fn the_secret_is_never_stored(b: Backend) {
    let srv = server(b).await;
    let tokens = [
        token(&srv, json!({"max_uploads": 2, "metadata": {"k": "v"}})).await,
        token(&srv, json!({})).await,
    ];
    // Used once (a file made, the count written), to have every write done.
    upload_ok_with(
        &srv,
        &tokens[0].token,
        Via::Query,
        "a.txt",
        b"a".to_vec(),
        &[],
    )
    .await;
    assert_eq!(srv.count("SELECT COUNT(*) FROM upload_tokens"), 2);
    for t in &tokens {
        let hex = &t.token["upt_".len()..];
        if srv.on_postgres() {
            let rows = srv.text(
                "SELECT COALESCE(string_agg(row_to_json(u)::text, ' '), '') FROM upload_tokens u",
            );
            assert!(rows.contains(&t.id), "the rows are searched: {rows}");
            assert!(!rows.contains(hex), "the token is stored: {rows}");
        } else {
            let mut searched = 0;
            for entry in std::fs::read_dir(&srv.data_dir).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if !name.starts_with("filestore.db") {
                    continue;
                }
                let bytes = std::fs::read(entry.path()).unwrap();
                searched += bytes.len();
                assert!(
                    !bytes.windows(hex.len()).any(|w| w == hex.as_bytes()),
                    "{name} holds the token {}",
                    t.token
                );
                assert!(
                    !bytes
                        .windows(hex.len())
                        .any(|w| w.eq_ignore_ascii_case(hex.as_bytes())),
                    "{name} holds the token (other case)"
                );
            }
            assert!(searched > 0, "the SQLite files were found");
        }
    }
}
