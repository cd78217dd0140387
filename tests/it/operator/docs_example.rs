//! The docs page's "Try it out" of `POST /v1/upload` works with what it
//! fills in (CONTRACT §22): Swagger UI fills each text field of the form
//! with its schema's first example (and makes one up from the pattern where
//! there is none), and leaves out those it left empty. The form that page
//! sends, made here from the served OpenAPI document, uploads (201).

use crate::common::TestServer;
use reqwest::multipart::{Form, Part};
use serde_json::Value;

/// The text fields of the upload form and their first examples, from the
/// served document; every field but the file has one.
async fn prefilled(srv: &TestServer) -> Vec<(String, String)> {
    let doc: Value = srv
        .http
        .get(srv.url("/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let op = &doc["paths"]["/v1/upload"]["post"];
    // Nothing is filled in for the parameters (headers, token): no example, no default.
    for p in op["parameters"].as_array().unwrap() {
        for key in ["example", "examples", "default"] {
            assert!(
                p.get(key).is_none() && p["schema"].get(key).is_none(),
                "{p}"
            );
        }
    }
    let props = op["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
        .as_object()
        .unwrap();
    let mut fields = Vec::new();
    for (name, schema) in props {
        if schema["format"] == "binary" {
            continue;
        }
        assert!(schema.get("default").is_none(), "{name}: {schema}");
        let example = schema["examples"][0]
            .as_str()
            .unwrap_or_else(|| panic!("{name} has no example: the page would make one up"));
        fields.push((name.clone(), example.to_string()));
    }
    assert!(fields.len() >= 5, "{fields:?}");
    fields
}

async fn send(srv: &TestServer, fields: &[(String, String)]) -> (u16, Value) {
    let mut form = Form::new();
    for (name, value) in fields {
        form = form.text(name.clone(), value.clone());
    }
    let file = Part::bytes(b"tried out".to_vec()).file_name("try.txt");
    let r = srv
        .post_form(&srv.secret_key, form.part("file", file))
        .await;
    (r.status().as_u16(), r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_pages_prefilled_upload_uploads() {
    let srv = TestServer::start().await;
    let fields = prefilled(&srv).await;
    // As the page sends it: the fields it filled, not the empty ones.
    let sent: Vec<_> = fields
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .cloned()
        .collect();
    let (status, file) = send(&srv, &sent).await;
    assert_eq!(status, 201, "{sent:?}: {file}");
    for (name, value) in &sent {
        match name.as_str() {
            "folder" => assert_eq!(file["folder"], value.as_str()),
            "private" => assert_eq!(file["private"], value == "true"),
            "metadata" => {
                assert_eq!(
                    file["metadata"],
                    serde_json::from_str::<Value>(value).unwrap()
                );
            }
            _ => {}
        }
    }
    // As a plain HTML form sends it: every field, the empty ones too (none).
    let (status, file) = send(&srv, &fields).await;
    assert_eq!(status, 201, "{fields:?}: {file}");
    assert_eq!(file["expires_at"], Value::Null);
}
