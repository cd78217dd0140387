//! tus with a token: `POST /v1/uploads` with `Authorization: Bearer upt_…`,
//! then that upload's PATCH/HEAD/GET/DELETE with the same token (another
//! token or a public key: 404); a use held from creation, turned into a
//! file at completion, given back on termination; `Upload-Length` over
//! `max_size` 413; a sniffed type not allowed 415 at the PATCH that
//! completes the first 8 KiB, the upload then ended and its use given back.

use super::*;

both_stores!(
    a_token_creates_and_completes_its_own_upload,
    another_token_or_key_cannot_touch_it,
    a_use_is_held_from_creation_and_given_back,
    over_max_size_at_creation_is_a_413,
    a_sniff_refusal_ends_the_upload_and_gives_the_use_back,
    small_patches_are_sniffed_once_the_first_8_kib_are_in,
    an_idle_token_upload_expires_and_gives_its_use_back,
    an_expired_token_cannot_keep_its_upload_going,
);

async fn a_token_creates_and_completes_its_own_upload(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let t = token(
        &srv,
        json!({"folder": "tus-in", "private": true, "file_expires": "1d", "max_uploads": 3,
               "types": ["image/png"], "metadata": {"source": "token"}}),
    )
    .await;
    let bytes = png_of(20_000);
    let url = tus_created(
        &srv,
        &t.token,
        bytes.len() as u64,
        &[
            ("filename", "pic.png"),
            ("filetype", "text/html"),
            ("metadata", &meta_json(&json!({"source": "page", "w": "1"}))),
        ],
    )
    .await;
    // HEAD and GET with the token.
    let r = tus_head(&srv, &url, &t.token).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["upload-offset"], "0");
    assert_eq!(
        r.headers()["upload-length"],
        bytes.len().to_string().as_str()
    );
    let r = tus_request(&srv, reqwest::Method::GET, &url, &t.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let st: Value = r.json().await.unwrap();
    assert_eq!(st["offset"], 0);
    assert_eq!(st["length"], bytes.len());
    // PATCHes with the token: the first 9000 bytes (the sniff passes),
    // then the rest.
    let r = tus_patch(&srv, &url, &t.token, 0, bytes[..9000].to_vec()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    assert_eq!(r.headers()["upload-offset"], "9000");
    let r = tus_head(&srv, &url, &t.token).await;
    assert_eq!(r.headers()["upload-offset"], "9000");
    let r = tus_patch(&srv, &url, &t.token, 9000, bytes[9000..].to_vec()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    // The file: the policy's folder, private, expires; sniffed type;
    // metadata merged, the token's keys winning.
    let r = tus_request(&srv, reqwest::Method::GET, &url, &t.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let st: Value = r.json().await.unwrap();
    let f = &st["file"];
    assert_eq!(f["id"], file_id.as_str());
    assert_eq!(f["name"], "pic.png");
    assert_eq!(f["folder"], "tus-in");
    assert_eq!(f["private"], true);
    assert!(f["expires_at"].is_string(), "{f}");
    assert_eq!(f["type"], "image/png");
    assert_eq!(f["size"], bytes.len());
    assert_eq!(f["metadata"], json!({"source": "token", "w": "1"}));
    let (status, got) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{file_id}"))
        .await;
    assert_eq!((status, &got["metadata"]), (200, &f["metadata"]));
    assert_eq!(
        srv.text(&format!("SELECT sha256 FROM files WHERE id = '{file_id}'")),
        crate::common::sha256_hex(&bytes)
    );
    assert_eq!(uploads_left(&srv, &t.id).await, 2, "one use spent");
    // A contradicting field at creation: 400, no use held.
    for meta in [
        vec![("filename", "x.png"), ("folder", "elsewhere")],
        vec![("filename", "x.png"), ("private", "false")],
        vec![("filename", "x.png"), ("expires", "2d")],
    ] {
        let r = tus_create(&srv, &t.token, None, 100, &meta).await;
        assert_eq!(code_of(r).await, (400, "bad_request".into()), "{meta:?}");
    }
    assert_eq!(uploads_left(&srv, &t.id).await, 2);
    // Creation-with-upload: the whole file in the POST.
    let small = png_of(300);
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&t.token)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-length", small.len())
        .header(
            "upload-metadata",
            encode_metadata(&[("filename", "small.png")]),
        )
        .body(small.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{:?}", r.text().await);
    assert_eq!(r.headers()["upload-offset"], "300");
    assert_eq!(uploads_left(&srv, &t.id).await, 1);
    let names: Vec<String> = listed(&srv, "folder=tus-in")
        .await
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // Terminating a completed upload does not give its use back.
    let r = tus_request(&srv, reqwest::Method::DELETE, &url, &t.token)
        .send()
        .await
        .unwrap();
    assert!(
        [204, 404].contains(&r.status().as_u16()),
        "DELETE of a completed upload: {}",
        r.status()
    );
    assert_eq!(uploads_left(&srv, &t.id).await, 1);
    assert_eq!(listed(&srv, "").await.len(), 2, "the file stays");
    if let Some(cfg) = s3 {
        crate::common::s3::no_multipart_left(&cfg).await;
    }
}

async fn another_token_or_key_cannot_touch_it(b: Backend) {
    let srv = server(b).await;
    let mine = token(&srv, json!({"max_uploads": 2})).await;
    let theirs = token(&srv, json!({"max_uploads": 2})).await;
    let url = tus_created(&srv, &mine.token, 100, &[("filename", "m.bin")]).await;
    let r = tus_patch(&srv, &url, &mine.token, 0, binary(40, 1)).await;
    assert_eq!(r.status(), 204);
    let pk = srv.new_key("public", &[ORIGIN]).await;
    // Another token (same account) and a public key (from its origin): 404
    // on HEAD, GET, PATCH and DELETE.
    for (who, key, origin) in [
        ("another token", theirs.token.as_str(), None),
        ("a public key", pk.as_str(), Some(ORIGIN)),
    ] {
        for method in [
            reqwest::Method::HEAD,
            reqwest::Method::GET,
            reqwest::Method::PATCH,
            reqwest::Method::DELETE,
        ] {
            let mut req = tus_request(&srv, method.clone(), &url, key);
            if let Some(o) = origin {
                req = req.header("origin", o);
            }
            if method == reqwest::Method::PATCH {
                req = req
                    .header(OCTETS.0, OCTETS.1)
                    .header("upload-offset", 40)
                    .body(binary(60, 2));
            }
            let r = req.send().await.unwrap();
            assert_eq!(r.status(), 404, "{method} by {who}");
        }
    }
    // An unknown token: 401.
    let bogus = format!("upt_{}", "2".repeat(64));
    let r = tus_head(&srv, &url, &bogus).await;
    assert_eq!(r.status(), 401);
    // Untouched: its owner finishes it.
    let r = tus_head(&srv, &url, &mine.token).await;
    assert_eq!(r.headers()["upload-offset"], "40");
    let r = tus_patch(&srv, &url, &mine.token, 40, binary(60, 2)).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    assert_eq!(uploads_left(&srv, &theirs.id).await, 2);
    assert_eq!(uploads_left(&srv, &mine.id).await, 1);
    // The account's secret key may see the token's upload (as any of the
    // account's uploads) and list it.
    let (status, _) = srv
        .get_json(&srv.secret_key, &url.replace(&srv.base_url, ""))
        .await;
    assert_eq!(status, 200);
}

async fn a_use_is_held_from_creation_and_given_back(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    // max_uploads 1: the open upload holds it; a second creation is 401,
    // and so is a multipart upload.
    let one = token(&srv, json!({"max_uploads": 1})).await;
    let url = tus_created(&srv, &one.token, 1000, &[("filename", "one.bin")]).await;
    assert_eq!(uploads_left(&srv, &one.id).await, 0, "held at creation");
    let r = tus_create(&srv, &one.token, None, 10, &[("filename", "two.bin")]).await;
    refused(r, 401, "unauthorized").await;
    let r = upload_with(&srv, &one.token, Via::Query, "m.txt", b"m".to_vec(), &[]).await;
    refused(r, 401, "unauthorized").await;
    let r = tus_patch(&srv, &url, &one.token, 0, binary(500, 3)).await;
    assert_eq!(r.status(), 204);
    // DELETE gives it back: a new upload may start.
    let r = tus_request(&srv, reqwest::Method::DELETE, &url, &one.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(tus_head(&srv, &url, &one.token).await.status(), 404);
    assert_eq!(uploads_left(&srv, &one.id).await, 1, "given back");
    let url = tus_created(&srv, &one.token, 10, &[("filename", "again.bin")]).await;
    assert_eq!(uploads_left(&srv, &one.id).await, 0);
    // Completed: the held use becomes the file's; the token is used up.
    let r = tus_patch(&srv, &url, &one.token, 0, binary(10, 4)).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    assert_eq!(uploads_left(&srv, &one.id).await, 0);
    let r = tus_create(&srv, &one.token, None, 10, &[("filename", "more.bin")]).await;
    refused(r, 401, "unauthorized").await;
    assert_eq!(listed(&srv, "").await.len(), 1);
    // max_uploads 3: two open and one file = used up; terminating one of
    // the open ones frees one.
    let three = token(&srv, json!({"max_uploads": 3})).await;
    let a = tus_created(&srv, &three.token, 100, &[("filename", "a.bin")]).await;
    let b2 = tus_created(&srv, &three.token, 100, &[("filename", "b.bin")]).await;
    assert_eq!(uploads_left(&srv, &three.id).await, 1);
    upload_ok_with(&srv, &three.token, Via::Bearer, "c.txt", b"c".to_vec(), &[]).await;
    assert_eq!(uploads_left(&srv, &three.id).await, 0);
    let r = tus_create(&srv, &three.token, None, 10, &[("filename", "d.bin")]).await;
    refused(r, 401, "unauthorized").await;
    // A secret key may end the token's upload too: the use comes back.
    let r = tus_request(&srv, reqwest::Method::DELETE, &b2, &srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(uploads_left(&srv, &three.id).await, 1);
    let r = tus_patch(&srv, &a, &three.token, 0, binary(100, 5)).await;
    assert_eq!(r.status(), 204);
    assert_eq!(uploads_left(&srv, &three.id).await, 1);
    // A revoked token's open upload is refused at its next PATCH (401) and
    // makes no file.
    let rv = token(&srv, json!({"max_uploads": 2})).await;
    let url = tus_created(&srv, &rv.token, 100, &[("filename", "rv.bin")]).await;
    assert_eq!(
        tus_patch(&srv, &url, &rv.token, 0, binary(50, 6))
            .await
            .status(),
        204
    );
    assert_eq!(
        delete_token_as(&srv, &srv.secret_key, &rv.id)
            .await
            .status(),
        200
    );
    let r = tus_patch(&srv, &url, &rv.token, 50, binary(50, 7)).await;
    refused(r, 401, "unauthorized").await;
    // Files: one.bin's second upload, c.txt, a.bin.
    let files = listed(&srv, "").await;
    assert_eq!(files.len(), 3, "{files:?}");
    // The open upload of the revoked token is the only thing besides them;
    // a secret key ends it.
    let r = tus_request(&srv, reqwest::Method::DELETE, &url, &srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let before = Held {
        files: 3,
        storage_bytes: 10 + 1 + 100,
        upload_count: 3,
    };
    nothing_stored(&srv, &before, s3.as_ref()).await;
}

async fn over_max_size_at_creation_is_a_413(b: Backend) {
    let srv = server(b).await;
    let t = token(&srv, json!({"max_size": 1000, "max_uploads": 2})).await;
    let r = tus_create(&srv, &t.token, None, 1001, &[("filename", "big.bin")]).await;
    refused(r, 413, "file_too_large").await;
    let r = tus_create(
        &srv,
        &t.token,
        None,
        PLAN_MAX + 1,
        &[("filename", "big.bin")],
    )
    .await;
    refused(r, 413, "file_too_large").await;
    assert_eq!(uploads_left(&srv, &t.id).await, 2, "no use held");
    assert_eq!(srv.count("SELECT COUNT(*) FROM tus_uploads"), 0);
    // Exactly max_size: taken; a PATCH past the declared length is still
    // the tus refusal.
    let url = tus_created(&srv, &t.token, 1000, &[("filename", "edge.bin")]).await;
    let r = tus_patch(&srv, &url, &t.token, 0, binary(1001, 1)).await;
    refused(r, 413, "upload_length_exceeded").await;
    let r = tus_patch(&srv, &url, &t.token, 0, binary(1000, 1)).await;
    assert_eq!(r.status(), 204);
    assert_eq!(uploads_left(&srv, &t.id).await, 1);
}

async fn a_sniff_refusal_ends_the_upload_and_gives_the_use_back(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let t = token(&srv, json!({"types": ["image/png"], "max_uploads": 2})).await;
    let before = held(&srv).await;
    // An ELF named x.png, in one PATCH.
    let url = tus_created(
        &srv,
        &t.token,
        128,
        &[("filename", "x.png"), ("filetype", "image/png")],
    )
    .await;
    assert_eq!(uploads_left(&srv, &t.id).await, 1);
    let r = tus_patch(&srv, &url, &t.token, 0, elf()).await;
    refused(r, 415, "unsupported_media_type").await;
    // The upload is ended: HEAD 404 (as a terminated upload), the use back.
    assert_eq!(tus_head(&srv, &url, &t.token).await.status(), 404);
    assert_eq!(tus_head(&srv, &url, &srv.secret_key).await.status(), 404);
    assert_eq!(uploads_left(&srv, &t.id).await, 2);
    // A file smaller than 8 KiB is sniffed whole at its last PATCH.
    let url = tus_created(&srv, &t.token, 9, &[("filename", "t.png")]).await;
    let r = tus_patch(&srv, &url, &t.token, 0, b"not".to_vec()).await;
    assert_eq!(r.status(), 204);
    let r = tus_patch(&srv, &url, &t.token, 3, b" a png".to_vec()).await;
    refused(r, 415, "unsupported_media_type").await;
    assert_eq!(tus_head(&srv, &url, &t.token).await.status(), 404);
    // Creation-with-upload of an ELF: 415 too, no upload left behind.
    let r = srv
        .http
        .post(srv.url("/v1/uploads"))
        .bearer_auth(&t.token)
        .header(TUS.0, TUS.1)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-length", 128)
        .header("upload-metadata", encode_metadata(&[("filename", "y.png")]))
        .body(elf())
        .send()
        .await
        .unwrap();
    refused(r, 415, "unsupported_media_type").await;
    nothing_stored(&srv, &before, s3.as_ref()).await;
    assert_eq!(uploads_left(&srv, &t.id).await, 2);
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM tus_uploads"),
        0,
        "no tus upload row is left"
    );
    // A real PNG in small PATCHes passes.
    let bytes = png_of(9000);
    let url = tus_created(&srv, &t.token, 9000, &[("filename", "ok.png")]).await;
    for (from, to) in [(0, 20), (20, 5000), (5000, 9000)] {
        let r = tus_patch(
            &srv,
            &url,
            &t.token,
            from,
            bytes[from as usize..to].to_vec(),
        )
        .await;
        assert_eq!(r.status(), 204, "{from}..{to}: {:?}", r.text().await);
    }
    assert_eq!(uploads_left(&srv, &t.id).await, 1);
    let files = listed(&srv, "").await;
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["type"], "image/png");
}

/// The wire (issue21-wire.md): "tus: at the PATCH that completes the first
/// 8 KiB, or the whole file if smaller" — also when the PATCHes before it
/// were small.
async fn small_patches_are_sniffed_once_the_first_8_kib_are_in(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let t = token(&srv, json!({"types": ["image/png"], "max_uploads": 2})).await;
    let before = held(&srv).await;
    // HTML in tiny PATCHes over the first 8 KiB: refused at the latest by
    // the PATCH that completes 8 KiB; none before it makes a file.
    let mut page = html();
    while page.len() < 12_000 {
        page.extend_from_slice(b"<p>lorem ipsum dolor sit amet</p>\n");
    }
    let url = tus_created(
        &srv,
        &t.token,
        page.len() as u64,
        &[("filename", "cat.png")],
    )
    .await;
    // Every PATCH until the refusal (the last one completes the file).
    let mut at = 0usize;
    let mut refused_at = None;
    for size in [10usize, 1000, 3000, 3000, 3000, 3000] {
        let end = (at + size).min(page.len());
        let r = tus_patch(&srv, &url, &t.token, at as u64, page[at..end].to_vec()).await;
        if r.status() == 204 {
            assert!(
                !r.headers().contains_key("x-file-id"),
                "the HTML page became a file"
            );
            at = end;
            continue;
        }
        assert_eq!(
            code_of(r).await,
            (415, "unsupported_media_type".into()),
            "PATCH {at}..{end}"
        );
        refused_at = Some(end);
        break;
    }
    let refused_at = refused_at.expect("the HTML page was refused at all");
    // Refused, ended, its use back, nothing stored.
    assert_eq!(tus_head(&srv, &url, &t.token).await.status(), 404);
    assert_eq!(uploads_left(&srv, &t.id).await, 2);
    nothing_stored(&srv, &before, s3.as_ref()).await;
    // And by the PATCH that completed the first 8 KiB (4010..7010 was
    // taken; 7010..10010 completes 8192), not only at the file's end.
    assert_eq!(
        refused_at,
        10_010,
        "refused by the PATCH ending at {refused_at} of {}, not by the one that \
         completes the first 8 KiB (ending at 10010)",
        page.len()
    );
}

/// A token's upload is on the short (10 minutes without a byte) clock; when
/// it expires, the use it held comes back.
async fn an_idle_token_upload_expires_and_gives_its_use_back(b: Backend) {
    let s3 = s3_of(&b);
    let srv = server(b).await;
    let t = token(&srv, json!({"max_uploads": 1})).await;
    let before = held(&srv).await;
    let url = tus_created(&srv, &t.token, 1000, &[("filename", "idle.bin")]).await;
    let r = tus_patch(&srv, &url, &t.token, 0, binary(300, 1)).await;
    assert_eq!(r.status(), 204);
    assert_eq!(uploads_left(&srv, &t.id).await, 0);
    srv.clock.advance(std::time::Duration::from_mins(11));
    srv.eventually(
        10,
        "the idle upload expires and its use comes back",
        || async { uploads_left(&srv, &t.id).await == 1 },
    )
    .await;
    let status = tus_head(&srv, &url, &t.token).await.status().as_u16();
    assert!(
        [404, 410].contains(&status),
        "HEAD of the expired upload: {status}"
    );
    nothing_stored(&srv, &before, s3.as_ref()).await;
    // The use is there to take.
    upload_ok_with(&srv, &t.token, Via::Query, "late.txt", b"l".to_vec(), &[]).await;
}

/// A token's resumable upload goes on while the token is used up, but not
/// past the token's expiry: a stranger cannot keep an upload (and the
/// account's room it holds) alive by a byte every few minutes.
async fn an_expired_token_cannot_keep_its_upload_going(b: Backend) {
    let srv = server(b).await;
    let t = token(&srv, json!({"expires_in": 60})).await;
    let r = tus_create(&srv, &t.token, None, 10, &[]).await;
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(uploads_left(&srv, &t.id).await, 0);
    // Used up, not expired: its own upload goes on.
    let r = tus_patch(&srv, &url, &t.token, 0, b"hello".to_vec()).await;
    assert_eq!(r.status(), 204);
    srv.clock.advance(std::time::Duration::from_secs(61));
    let r = tus_patch(&srv, &url, &t.token, 5, b"world".to_vec()).await;
    assert_eq!(code_of(r).await, (401, "unauthorized".into()));
    // The account's secret key may still end it.
    let r = tus_request(&srv, reqwest::Method::DELETE, &url, &srv.secret_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
}
