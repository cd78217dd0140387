//! `/v1/keys`: list (never a secret), create (the record `admin key
//! create` prints, with a secret key's S3 credential), revoke (the calling
//! key too, and the answer says so); every refusal.

use super::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_listed_created_and_revoked() {
    let srv = TestServer::start().await;
    let sk = &srv.secret_key;
    let (status, list) = call(&srv, Method::GET, "/v1/keys", sk, None).await;
    assert_eq!(status, 200, "{list}");
    let keys = list["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1, "the bootstrap key: {list}");
    let own = keys[0]["id"].as_str().unwrap().to_string();
    assert!(own.starts_with("key_"), "{list}");
    assert_eq!(keys[0]["kind"], "secret");

    // A secret key: its secret and its S3 credential, shown once.
    let r = send(
        &srv,
        Method::POST,
        "/v1/keys",
        Some(sk),
        Some(json!({"kind": "secret", "name": "deploy"})),
    )
    .await;
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let secret: Value = r.json().await.unwrap();
    let secret_id = secret["id"].as_str().unwrap().to_string();
    assert_eq!(location, format!("/v1/keys/{secret_id}"));
    let sk2 = secret["key"].as_str().unwrap().to_string();
    assert!(sk2.starts_with("sk_"), "{secret}");
    assert_eq!(secret["kind"], "secret");
    assert_eq!(secret["name"], "deploy");
    assert_eq!(secret["account"], srv.account_id.as_str());
    assert_eq!(secret["origins"], json!([]));
    assert_eq!(secret["s3_access_key_id"], secret_id.as_str());
    assert!(secret["s3_secret_access_key"].as_str().unwrap().len() >= 32);
    assert!(secret["created_at"].as_str().unwrap().ends_with('Z'));
    // The same credential the key itself is shown.
    let (status, s3) = call(&srv, Method::GET, "/v1/s3/credentials", &sk2, None).await;
    assert_eq!(status, 200, "{s3}");
    assert_eq!(s3["secret_access_key"], secret["s3_secret_access_key"]);

    // A public key: origins, no S3 credential.
    let (status, public) = call(
        &srv,
        Method::POST,
        "/v1/keys",
        sk,
        Some(json!({"kind": "public", "origins": ["https://app.example.com"]})),
    )
    .await;
    assert_eq!(status, 201, "{public}");
    let pk = public["key"].as_str().unwrap().to_string();
    assert!(pk.starts_with("pk_"), "{public}");
    assert_eq!(public["origins"], json!(["https://app.example.com"]));
    assert_eq!(public["name"], Value::Null);
    assert!(public.get("s3_access_key_id").is_none(), "{public}");
    let up = srv
        .upload_with_origin(&pk, "https://app.example.com", "p.txt", b"hi".to_vec())
        .await;
    assert_eq!(up.status(), 201, "the new public key uploads");

    // Listed newest first, never a secret.
    let (_, list) = call(&srv, Method::GET, "/v1/keys", sk, None).await;
    let ids: Vec<&str> = list["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    let public_id = public["id"].as_str().unwrap().to_string();
    assert_eq!(ids, [public_id.as_str(), secret_id.as_str(), own.as_str()]);
    let text = list.to_string();
    for shown_once in [&sk2, &pk, &srv.secret_key] {
        assert!(
            !text.contains(shown_once.as_str()),
            "a secret listed: {text}"
        );
    }
    assert!(!text.contains("s3_secret_access_key"), "{text}");
    let listed = &list["keys"][1];
    assert_eq!(listed["name"], "deploy");
    assert_eq!(listed["kind"], "secret");
    assert_eq!(listed["created_at"], secret["created_at"]);
    assert_eq!(
        list["keys"][0]["origins"],
        json!(["https://app.example.com"])
    );

    // Revoking another key: at once, and gone from the list.
    let path = format!("/v1/keys/{public_id}");
    let (status, gone) = call(&srv, Method::DELETE, &path, sk, None).await;
    assert_eq!(status, 200, "{gone}");
    assert_eq!(
        gone,
        json!({"success": true, "id": public_id, "calling_key": false})
    );
    let up = srv
        .upload_with_origin(&pk, "https://app.example.com", "q.txt", b"hi".to_vec())
        .await;
    assert_eq!(up.status(), 401, "a revoked key is refused at once");
    let again = refused(&srv, Method::DELETE, &path, Some(sk), None).await;
    assert_eq!(again, (404, "not_found".into()), "revoked twice");
    let unknown = refused(&srv, Method::DELETE, "/v1/keys/key_nope", Some(sk), None).await;
    assert_eq!(unknown, (404, "not_found".into()));
    let (_, list) = call(&srv, Method::GET, "/v1/keys", sk, None).await;
    assert_eq!(list["keys"].as_array().unwrap().len(), 2, "{list}");

    // Revoking the calling key: allowed, and said.
    let path = format!("/v1/keys/{secret_id}");
    let (status, own_gone) = call(&srv, Method::DELETE, &path, &sk2, None).await;
    assert_eq!(status, 200, "{own_gone}");
    assert_eq!(own_gone["calling_key"], true, "{own_gone}");
    let after = refused(&srv, Method::GET, "/v1/keys", Some(&sk2), None).await;
    assert_eq!(after, (401, "unauthorized".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_new_key_is_refused_and_only_secret_keys_manage_keys() {
    let srv = TestServer::start().await;
    let sk = srv.secret_key.clone();
    for (body, why) in [
        (json!({"kind": "public"}), "a public key without origins"),
        (json!({"kind": "public", "origins": []}), "empty origins"),
        (
            json!({"kind": "secret", "origins": ["https://a.example"]}),
            "a secret key with origins",
        ),
        (json!({"kind": "token"}), "an upload token is no key"),
        (json!({"kind": "admin"}), "an unknown kind"),
        (json!({"name": "x"}), "no kind"),
        (json!({"kind": "secret", "name": ""}), "an empty name"),
        (
            json!({"kind": "secret", "name": "x".repeat(101)}),
            "a long name",
        ),
        (
            json!({"kind": "secret", "name": "a\nb"}),
            "a control character",
        ),
        (
            json!({"kind": "public", "origins": ["nope"]}),
            "a bad origin",
        ),
        (json!({"kind": "secret", "max_size": 1}), "an unknown field"),
        (json!({"kind": 1}), "a kind not a string"),
    ] {
        let got = refused(&srv, Method::POST, "/v1/keys", Some(&sk), Some(body)).await;
        assert_eq!(got, (400, "bad_request".into()), "{why}");
    }
    let r = send(
        &srv,
        Method::POST,
        "/v1/keys",
        Some(&sk),
        Some(json!({"kind": "public"})),
    )
    .await;
    let body: Value = r.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("origins is required"), "{message}");
    for raw in ["not json", "[]", "\"secret\"", ""] {
        let got = refused_raw(&srv, "/v1/keys", &sk, raw).await;
        assert_eq!(got, (400, "bad_request".into()), "{raw:?}");
    }
    let (_, list) = call(&srv, Method::GET, "/v1/keys", &sk, None).await;
    assert_eq!(list["keys"].as_array().unwrap().len(), 1, "nothing stored");

    only_secret_keys(&srv, Method::GET, "/v1/keys", None).await;
    let body = json!({"kind": "secret"});
    only_secret_keys(&srv, Method::POST, "/v1/keys", Some(body)).await;
    let own = list["keys"][0]["id"].as_str().unwrap().to_string();
    only_secret_keys(&srv, Method::DELETE, &format!("/v1/keys/{own}"), None).await;
    let (status, _) = call(&srv, Method::GET, "/v1/keys", &sk, None).await;
    assert_eq!(status, 200, "the refusals revoked nothing");
}
