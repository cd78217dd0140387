//! `GET /v1/files?metadata.KEY=VALUE`: exact matches, several filters all
//! to match, with `folder`, a bad key 400, pages through the cursor; the
//! metadata of tus uploads and of token uploads is found the same way.

use super::*;

both_stores!(
    the_list_filters_by_metadata,
    filtered_pages_follow_the_cursor,
);

fn ids(files: &[Value]) -> std::collections::BTreeSet<String> {
    files
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

fn id(f: &Value) -> String {
    f["id"].as_str().unwrap().to_string()
}

fn set(v: &[&Value]) -> std::collections::BTreeSet<String> {
    v.iter().map(|f| id(f)).collect()
}

async fn the_list_filters_by_metadata(store: Backend) {
    let srv = server(store).await;
    let up = |name: &'static str, folder: Option<&'static str>, meta: Value| {
        let srv = &srv;
        async move {
            let meta = meta.to_string();
            let mut fields = vec![("metadata", meta.as_str())];
            if let Some(f) = folder {
                fields.push(("folder", f));
            }
            srv.upload_ok(name, name.as_bytes().to_vec(), &fields).await
        }
    };
    let f_a = up(
        "a.txt",
        Some("x"),
        json!({"project": "apollo", "stage": "dev"}),
    )
    .await;
    let f_b = up("b.txt", None, json!({"project": "apollo", "stage": "prod"})).await;
    let f_c = up(
        "c.txt",
        Some("x"),
        json!({"project": "gemini", "stage": "dev"}),
    )
    .await;
    let f_d = up(
        "d.txt",
        None,
        json!({"note": "hello world & more", "project": "Apollo"}),
    )
    .await;
    let _plain = up("e.txt", Some("x"), json!({})).await;
    // A tus upload's metadata and a token's merged metadata are found too.
    let url = tus_created(
        &srv,
        &srv.secret_key,
        3,
        &[
            ("filename", "t.bin"),
            (
                "metadata",
                &meta_json(&json!({"project": "apollo", "via": "tus"})),
            ),
        ],
    )
    .await;
    let r = tus_patch(&srv, &url, &srv.secret_key, 0, b"tus".to_vec()).await;
    assert_eq!(r.status(), 204);
    let tus_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    let tok_t = token(&srv, json!({"metadata": {"via": "token"}})).await;
    let tok = upload_ok_with(
        &srv,
        &tok_t.token,
        Via::Query,
        "tok.txt",
        b"t".to_vec(),
        &[("metadata", r#"{"via":"page","project":"apollo"}"#)],
    )
    .await;
    assert_eq!(
        tok["metadata"],
        json!({"via": "token", "project": "apollo"})
    );

    // One filter: an exact, case-sensitive match.
    let got = ids(&listed(&srv, "metadata.project=apollo").await);
    let mut want = set(&[&f_a, &f_b, &tok]);
    want.insert(tus_id.clone());
    assert_eq!(got, want);
    assert_eq!(
        ids(&listed(&srv, "metadata.project=Apollo").await),
        set(&[&f_d])
    );
    assert_eq!(
        ids(&listed(&srv, "metadata.project=apoll").await),
        set(&[]),
        "no prefix match"
    );
    // No match, and a key no file has.
    assert!(listed(&srv, "metadata.project=mercury").await.is_empty());
    assert!(listed(&srv, "metadata.nobody=x").await.is_empty());
    // An encoded value.
    assert_eq!(
        ids(&listed(&srv, "metadata.note=hello%20world%20%26%20more").await),
        set(&[&f_d])
    );
    // Two filters: both must match.
    assert_eq!(
        ids(&listed(&srv, "metadata.project=apollo&metadata.stage=prod").await),
        set(&[&f_b])
    );
    assert_eq!(
        ids(&listed(&srv, "metadata.stage=dev&metadata.project=apollo").await),
        set(&[&f_a])
    );
    assert!(listed(&srv, "metadata.project=gemini&metadata.stage=prod")
        .await
        .is_empty());
    assert_eq!(
        ids(&listed(&srv, "metadata.via=token&metadata.project=apollo").await),
        set(&[&tok])
    );
    let mut via_tus = std::collections::BTreeSet::new();
    via_tus.insert(tus_id);
    assert_eq!(ids(&listed(&srv, "metadata.via=tus").await), via_tus);
    // With a folder.
    assert_eq!(
        ids(&listed(&srv, "folder=x&metadata.stage=dev").await),
        set(&[&f_a, &f_c])
    );
    assert_eq!(
        ids(&listed(&srv, "metadata.project=apollo&folder=x").await),
        set(&[&f_a])
    );
    assert!(listed(&srv, "folder=x&metadata.stage=prod")
        .await
        .is_empty());
    // The listed records carry their metadata.
    let one = listed(&srv, "metadata.stage=prod").await;
    assert_eq!(
        one[0]["metadata"],
        json!({"project": "apollo", "stage": "prod"})
    );
    // A bad key: 400.
    for q in [
        "metadata.Project=apollo",
        "metadata.=apollo",
        "metadata.a.b=x",
        "metadata.has%20space=x",
        &format!("metadata.{}=x", "k".repeat(65)),
    ] {
        let r = srv
            .http
            .get(srv.url(&format!("/v1/files?{q}")))
            .bearer_auth(&srv.secret_key)
            .send()
            .await
            .unwrap();
        assert_eq!(code_of(r).await, (400, "bad_request".into()), "{q}");
    }
    // Another account's files never match.
    let (_, other) = srv.new_account("other", "free").await;
    let r = srv
        .upload_as(
            &other,
            "o.txt",
            b"o".to_vec(),
            &[("metadata", r#"{"project":"apollo"}"#)],
        )
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(listed(&srv, "metadata.project=apollo").await.len(), 4);
    let (status, theirs) = srv
        .get_json(&other, "/v1/files?metadata.project=apollo")
        .await;
    assert_eq!(status, 200);
    assert_eq!(theirs["files"].as_array().unwrap().len(), 1);
}

async fn filtered_pages_follow_the_cursor(b: Backend) {
    let srv = server(b).await;
    // 7 tagged files among untagged and otherwise-tagged ones.
    let mut tagged = std::collections::BTreeSet::new();
    for i in 0..15 {
        let meta = match i % 3 {
            0 | 1 if tagged.len() < 7 => json!({"batch": "b1", "i": i.to_string()}),
            _ => json!({"batch": "b2"}),
        };
        let f = srv
            .upload_ok(
                &format!("p{i}.txt"),
                vec![b'p'; i + 1],
                &[("metadata", &meta.to_string()), ("folder", "pages")],
            )
            .await;
        if meta["batch"] == "b1" {
            tagged.insert(id(&f));
        }
    }
    assert_eq!(tagged.len(), 7);
    for query in ["metadata.batch=b1", "folder=pages&metadata.batch=b1"] {
        let mut seen = Vec::new();
        let mut pages = 0;
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/v1/files?limit=2&{query}&cursor={c}"),
                None => format!("/v1/files?limit=2&{query}"),
            };
            let (status, page) = srv.get_json(&srv.secret_key, &path).await;
            assert_eq!(status, 200, "{path}: {page}");
            pages += 1;
            let files = page["files"].as_array().unwrap();
            assert!(files.len() <= 2);
            for f in files {
                assert_eq!(f["metadata"]["batch"], "b1", "{f}");
                seen.push(id(f));
            }
            let Some(c) = page["cursor"].as_str() else {
                assert_eq!(page["has_more"], false);
                break;
            };
            assert_eq!(page["has_more"], true);
            cursor = Some(c.to_string());
            assert!(pages < 20, "the cursor never ends");
        }
        assert_eq!(seen.len(), 7, "{query}: each once: {seen:?}");
        assert_eq!(
            seen.iter()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>(),
            tagged
        );
        assert_eq!(pages, 4, "{query}: 2+2+2+1");
    }
}
