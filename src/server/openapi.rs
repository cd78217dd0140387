//! The OpenAPI 3.1 document of the API (`GET /v1/openapi.json`), generated
//! from the handlers' `#[utoipa::path]` annotations and the wire types of
//! `crate::api`, and the reference page (`GET /v1/docs`: Swagger UI, served
//! from the binary, no outside network).

use super::history::{UsageDay, UsageHistory};
use super::hooks::{Delivery, DeliveryList, WebhookCreate, WebhookList};
use super::keys::{KeyCreate, KeyList, KeyRevoked};
use super::selection::ZipRequest;
use crate::api::{
    BulkDeleteRequest, BulkDeleteResult, DeleteResult, ErrorBody, ErrorDetail, FileCopy, FileList,
    FileRecord, FileUpdate, Folder, FolderDeleteResult, FolderList, Health, HealthCheck,
    OpenUpload, OpenUploads, S3Credentials, SignedUrl, SignedUrlRequest, TransformRequest,
    UploadStatus, UploadToken, UploadTokenList, UploadTokenPolicy, UploadTokenRequest, Usage,
    UsageLimits, WhoAmI, WhoAmIAccount, WhoAmIKey,
};
use crate::domain::{digest, filepath, metadata, sniff, tus, validate};
use crate::service::admin::{KeyView, NewKey, NewWebhook, WebhookView};
use axum::Router;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, KnownFormat, PathItem, Required, ResponseBuilder, ResponsesBuilder,
};
use utoipa::{Modify, OpenApi};
use utoipa_swagger_ui::SwaggerUi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "filestore",
        description = "Store files, list them, hand out links. Every path under /v1 but \
/v1/health, /v1/openapi.json and /v1/docs takes `Authorization: Bearer <key>` (secret keys \
`sk_…`; public keys `pk_…` may only upload, from their origins). Errors are always \
`{\"error\": {\"code\", \"message\"}}`.",
        license(name = "MIT")
    ),
    paths(
        super::handlers::upload,
        super::handlers::list,
        super::handlers::folders,
        super::handlers::get,
        super::paths::file_at,
        super::handlers::delete,
        super::handlers::update,
        super::handlers::copy,
        super::handlers::delete_many,
        super::handlers::delete_folder,
        super::handlers::folder_zip,
        super::handlers::signed_url,
        super::handlers::usage,
        super::whoami::whoami,
        super::s3_credentials::credentials,
        super::handlers::health,
        super::tus::options,
        super::tus::create,
        super::tus::head,
        super::tus::status,
        super::tus::patch,
        super::tus::terminate,
        super::tus::list,
        super::tokens::create,
        super::tokens::list,
        super::tokens::get,
        super::tokens::revoke,
        super::keys::list,
        super::keys::create,
        super::keys::revoke,
        super::hooks::list,
        super::hooks::create,
        super::hooks::delete,
        super::hooks::deliveries,
        super::history::usage_history,
        super::selection::zip_files,
    ),
    components(schemas(
        FileRecord, FileList, FileUpdate, FileCopy, BulkDeleteRequest, BulkDeleteResult, FolderDeleteResult, Folder, FolderList, SignedUrl, SignedUrlRequest, TransformRequest, DeleteResult, Usage, UsageLimits, WhoAmI, WhoAmIAccount, WhoAmIKey, S3Credentials,
        Health, HealthCheck, ErrorBody, ErrorDetail, UploadStatus, OpenUpload, OpenUploads,
        UploadToken, UploadTokenList, UploadTokenRequest, UploadTokenPolicy,
        KeyView, KeyList, KeyCreate, KeyRevoked, NewKey,
        WebhookView, WebhookList, WebhookCreate, NewWebhook, Delivery, DeliveryList,
        UsageDay, UsageHistory, ZipRequest
    )),
    modifiers(&Additions),
    tags(
        (name = "files", description = "Uploads, records, deletion, signed URLs"),
        (name = "uploads", description = "Resumable uploads (tus 1.0.0)"),
        (name = "account", description = "Usage, who the calling key is, and its S3 credential"),
        (name = "upload tokens", description = "One-time, narrow upload permissions for browsers"),
        (name = "keys", description = "The account's API keys, managed with a secret key"),
        (name = "webhooks", description = "The account's webhook subscriptions and their deliveries"),
        (name = "cdn", description = "File bytes"),
        (name = "operating", description = "Health and this document"),
    )
)]
struct ApiDoc;

/// What the annotations cannot say: the bearer scheme, the upload form
/// (read by hand from the multipart stream), its digest header and error,
/// and the CDN route.
struct Additions;

impl Modify for Additions {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components
            .schemas
            .insert("UploadTokenRequest".into(), upload_token_request().into());
        if let Some(utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(o))) =
            components.schemas.get_mut("WebhookCreate")
        {
            let events = super::hooks::events_schema();
            o.properties.insert("events".into(), events.into());
        }
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        if let Some(op) = doc
            .paths
            .paths
            .get_mut("/v1/upload")
            .and_then(|item| item.post.as_mut())
        {
            op.request_body = Some(upload_form());
            op.parameters
                .get_or_insert_with(Vec::new)
                .push(content_digest_parameter());
            if let Some(utoipa::openapi::RefOr::T(bad)) = op.responses.responses.get_mut("400") {
                bad.description = "No file part, an invalid field or Content-Digest, or \
(code `checksum_mismatch`) a file whose SHA-256 is not the one the `sha256` field or the \
`Content-Digest` header gave: nothing is stored"
                    .into();
            }
        }
        let list_params = doc
            .paths
            .paths
            .get_mut("/v1/files")
            .and_then(|item| item.get.as_mut())
            .and_then(|op| op.parameters.as_mut());
        for p in list_params.into_iter().flatten() {
            match p.name.as_str() {
                "folder" => p.schema = Some(folder_schema().into()),
                "recursive" => {
                    p.schema = Some(
                        ObjectBuilder::new()
                            .schema_type(SchemaType::new(Type::String))
                            .pattern(Some(validate::BOOLEAN_PATTERN))
                            .into(),
                    );
                }
                _ => {}
            }
        }
        let folder_params = doc
            .paths
            .paths
            .get_mut("/v1/folders")
            .and_then(|item| item.get.as_mut())
            .and_then(|op| op.parameters.as_mut());
        for p in folder_params.into_iter().flatten() {
            if p.name == "parent" {
                p.schema = Some(folder_schema().into());
            }
        }
        // The folder a folder delete or zip takes: required, not the root.
        let targets = doc
            .paths
            .paths
            .iter_mut()
            .filter_map(|(path, item)| match path.as_str() {
                "/v1/folders/zip" => item.get.as_mut(),
                "/v1/folders" => item.delete.as_mut(),
                _ => None,
            });
        for op in targets {
            for p in op.parameters.iter_mut().flatten() {
                if p.name == "folder" {
                    p.required = utoipa::openapi::Required::True;
                    p.schema = Some(
                        folder_schema()
                            .pattern(Some(validate::NON_ROOT_FOLDER_PATTERN))
                            .min_length(Some(1))
                            .into(),
                    );
                }
            }
        }
        // The path `GET /v1/files/at` takes: required, a folder's segments
        // and a name.
        let at = doc
            .paths
            .paths
            .get_mut("/v1/files/at")
            .and_then(|item| item.get.as_mut());
        for p in at
            .into_iter()
            .flat_map(|op| op.parameters.iter_mut().flatten())
        {
            if p.name == "path" {
                p.required = utoipa::openapi::Required::True;
                p.schema = Some(
                    ObjectBuilder::new()
                        .schema_type(SchemaType::new(Type::String))
                        .pattern(Some(filepath::PATH_PATTERN))
                        .min_length(Some(1))
                        .max_length(Some(filepath::MAX_PATH + 1))
                        .into(),
                );
            }
        }
        // Optional tus headers are absent or a string, never null.
        for path in ["/v1/uploads", "/v1/uploads/{id}"] {
            let Some(item) = doc.paths.paths.get_mut(path) else {
                continue;
            };
            for op in [item.post.as_mut(), item.patch.as_mut()]
                .into_iter()
                .flatten()
            {
                for p in op.parameters.iter_mut().flatten() {
                    let pattern = match p.name.as_str() {
                        "Upload-Checksum" => Some(tus::CHECKSUM_PATTERN),
                        "Upload-Metadata" => None,
                        _ => continue,
                    };
                    p.schema = Some(
                        ObjectBuilder::new()
                            .schema_type(SchemaType::new(Type::String))
                            .pattern(pattern)
                            .into(),
                    );
                }
            }
        }
        doc.paths.paths.insert(
            "/live/{account}/{file}/{name}".into(),
            PathItem::from_http_methods([HttpMethod::Get, HttpMethod::Head], cdn_operation()),
        );
        doc.paths.paths.insert(
            "/p/{account}/{path}".into(),
            PathItem::from_http_methods([HttpMethod::Get, HttpMethod::Head], stable_link()),
        );
    }
}

/// A folder, as [`validate::folder`] takes it.
fn folder_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::String))
        .description(Some(
            "Folder: 1-1024 bytes (UTF-8) of /-separated segments, each 1-255 bytes of any \
characters but control (Cc) and bidirectional formatting characters (no empty, . or .. \
segment); leading and trailing / are dropped; empty is the root",
        ))
        .pattern(Some(validate::FOLDER_PATTERN))
        .max_length(Some(validate::MAX_FOLDER))
}

/// The body of `POST /v1/upload-tokens`, with the rules its derived schema
/// cannot say (each property's pattern and range, null for "the default").
fn upload_token_request() -> ObjectBuilder {
    let nullable = |t: Type| SchemaType::from_iter([t, Type::Null]);
    let integer = |min: u32, max: Option<u32>, description: &str| {
        ObjectBuilder::new()
            .schema_type(nullable(Type::Integer))
            .minimum(Some(f64::from(min)))
            .maximum(max.map(f64::from))
            .description(Some(description))
    };
    let string = |t: Type| ObjectBuilder::new().schema_type(SchemaType::new(t));
    let metadata = ObjectBuilder::new()
        .schema_type(nullable(Type::Object))
        .property_names(Some(
            string(Type::String).pattern(Some(metadata::KEY_PATTERN)),
        ))
        .additional_properties(Some(string(Type::String)))
        .max_properties(Some(metadata::MAX_KEYS))
        .description(Some(
            "Merged into every file's metadata (its keys win): string values, keys \
[a-z0-9_-]{1,64}, at most 16, 4 KiB as compact JSON",
        ));
    let types = ArrayBuilder::new()
        .schema_type(nullable(Type::Array))
        .items(string(Type::String).pattern(Some(sniff::TYPE_PATTERN)))
        .max_items(Some(32))
        .description(Some(
            "Allowed types, checked against the type sniffed from the bytes: type/subtype or \
type/* (image/* excludes SVG); default any",
        ));
    ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::Object))
        .property(
            "folder",
            folder_schema().schema_type(nullable(Type::String)),
        )
        .property(
            "max_size",
            integer(
                1,
                None,
                "Bytes per file, at most the plan's maximum file size",
            ),
        )
        .property("types", types)
        .property(
            "max_uploads",
            integer(1, Some(1000), "How many files it may create (default 1)"),
        )
        .property(
            "expires_in",
            integer(1, Some(86_400), "Seconds it stays usable (default 3600)"),
        )
        .property(
            "private",
            ObjectBuilder::new().schema_type(nullable(Type::Boolean)),
        )
        .property(
            "file_expires",
            ObjectBuilder::new()
                .schema_type(SchemaType::from_iter([
                    Type::String,
                    Type::Integer,
                    Type::Null,
                ]))
                .pattern(Some(validate::expires_pattern()))
                .minimum(Some(1.0))
                .maximum(Some(validate::MAX_EXPIRES.as_secs_f64()))
                .description(Some(
                    "The files' `expires`: seconds, or a duration such as 7d (default permanent)",
                )),
        )
        .property("metadata", metadata)
        .property(
            "replace",
            ObjectBuilder::new()
                .schema_type(nullable(Type::Boolean))
                .description(Some(
                    "Each file it uploads replaces the files at its path (default false)",
                )),
        )
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
}

/// The example of each text field of the upload form: what the docs page
/// (Swagger UI) fills in for "Try it out", which without one makes up
/// values from the patterns (`expires` of fifty zeros and `39m`, a random
/// `sha256` that mismatches, `metadata` "string": 400 every time). Each is
/// valid, so the pre-filled form uploads (201); an empty one is left out
/// by the page and means none (`tests/it/operator/docs_example.rs`).
pub(crate) const UPLOAD_EXAMPLES: [(&str, &str); 7] = [
    ("folder", "docs"),
    ("private", "false"),
    ("expires", ""),
    ("sha256", ""),
    ("metadata", r#"{"source":"docs page"}"#),
    ("replace", "false"),
    ("if_absent", "false"),
];

/// `multipart/form-data`: `file` (required), `folder`, `private`, `expires`,
/// `sha256`, `metadata`, `replace`, `if_absent`.
fn upload_form() -> utoipa::openapi::request_body::RequestBody {
    let example = |field: &str| {
        UPLOAD_EXAMPLES
            .iter()
            .find(|(name, _)| *name == field)
            .map(|(_, value)| *value)
            .expect("every text field has its example")
    };
    let text = |field: &str, description: &str, pattern: &str| {
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .description(Some(description))
            .pattern(Some(pattern))
            .examples([example(field)])
    };
    let form = ObjectBuilder::new()
        .schema_type(SchemaType::new(Type::Object))
        // Other fields are read and ignored; a part's name must still be one
        // an HTTP header can carry (no control characters, no quote).
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(SchemaType::new(Type::String))
                .pattern(Some("^[^\\x00-\\x1f\\x7f\"\\\\]*$")),
        ))
        .property(
            "file",
            ObjectBuilder::new()
                .schema_type(SchemaType::new(Type::String))
                .format(Some(SchemaFormat::Custom("binary".into())))
                .description(Some("The bytes; the part's file name is the file's name")),
        )
        .required("file")
        .property("folder", folder_schema().examples([example("folder")]))
        .property(
            "private",
            text(
                "private",
                "true makes the file private (secret keys only); also 1/0, yes/no, on/off, any case",
                validate::BOOLEAN_PATTERN,
            ),
        )
        .property(
            "expires",
            text(
                "expires",
                "Delete after this long: a number and s, m, h, d or w, at most 365 days",
                &validate::expires_pattern(),
            ),
        )
        .property(
            "sha256",
            text(
                "sha256",
                "The file's SHA-256, 64 hex digits (either case), before or after the file \
part: a file whose bytes do not match is refused (400 checksum_mismatch) and not stored. \
Empty is none",
                digest::SHA256_FIELD_PATTERN,
            ),
        )
        .property(
            "metadata",
            ObjectBuilder::new()
                .schema_type(SchemaType::new(Type::String))
                .description(Some(
                    "The file's metadata, a JSON object of strings: keys of 1-64 characters \
a-z 0-9 _ -, at most 16 keys, at most 4096 bytes as compact JSON; anything else is 400 \
bad_request. Empty is none. The File record returns it as `metadata`.",
                ))
                .examples([example("metadata")]),
        )
        .property(
            "replace",
            text(
                "replace",
                "true: the file replaces every file at its path (folder/name) in the \
transaction that stores it, each a file.deleted event, its bytes out of storage_bytes at once",
                validate::BOOLEAN_PATTERN,
            ),
        )
        .property(
            "if_absent",
            text(
                "if_absent",
                "true: 409 conflict, nothing stored, when the path (folder/name) already holds \
a file; not with replace=true",
                validate::BOOLEAN_PATTERN,
            ),
        );
    RequestBodyBuilder::new()
        .content(
            "multipart/form-data",
            ContentBuilder::new().schema(Some(form)).build(),
        )
        .required(Some(Required::True))
        .build()
}

/// The upload's `Content-Digest` request header (RFC 9530).
fn content_digest_parameter() -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name("Content-Digest")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(
            "The file part's SHA-256 (not the multipart body's), RFC 9530: \
`sha-256=:<base64 of the 32 bytes>:`; other algorithms may be listed and are ignored. \
A malformed value or a digest that is not 32 bytes is 400 bad_request; one that disagrees \
with a `sha256` field too. A file whose bytes do not match: 400 checksum_mismatch, nothing stored.",
        ))
        .schema(Some(
            ObjectBuilder::new().schema_type(SchemaType::new(Type::String)),
        ))
        .build()
}

/// `GET`/`HEAD /p/{account}/{path}`: the newest file at a path, as the
/// CDN serves a file (its parameters but `file` and `name`, which a path
/// stands for).
fn stable_link() -> utoipa::openapi::path::Operation {
    let mut op = cdn_operation();
    op.summary =
        Some("The newest file at a path (a stable link), or an image variant of it".into());
    op.description = Some(
        "The newest file at the path, as /live/ serves a file (ETag, one byte range, \
conditional requests, image variants), with Cache-Control: no-cache on the file and its \
variants. No file there, or a private newest without a valid signature of the path \
(POST /v1/files/{id}/signed-url with by_path: true): 404; an expired signature: 403."
            .into(),
    );
    if let Some(params) = op.parameters.as_mut() {
        params.retain(|p| p.name != "file");
        for p in params.iter_mut().filter(|p| p.name == "name") {
            p.name = "path".into();
            p.description = Some(
                "The file's path: its folder's segments and its name, each percent-encoded".into(),
            );
        }
    }
    op
}

/// `GET`/`HEAD /live/{account}/{file}/{name}`: the bytes.
fn cdn_operation() -> utoipa::openapi::path::Operation {
    // A string parameter: in the path (required) or the query (optional).
    let param = |place: ParameterIn, name: &str, description: &str| {
        let required = match place {
            ParameterIn::Path => Required::True,
            _ => Required::False,
        };
        ParameterBuilder::new()
            .name(name)
            .parameter_in(place)
            .required(required)
            .description(Some(description))
            .schema(Some(
                ObjectBuilder::new().schema_type(SchemaType::new(Type::String)),
            ))
            .build()
    };
    let error = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build()
    };
    let bytes = || {
        ContentBuilder::new()
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(SchemaType::new(Type::String))
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary))),
            ))
            .build()
    };
    OperationBuilder::new()
        .tag("cdn")
        .summary(Some("A file's bytes, or an image variant of them"))
        .description(Some(
            "Public files for anyone; private ones with a valid signed URL (a variant's \
signature covers its parameters). One byte range (206), conditional requests (304). No key: \
any key sent is ignored. Any of w, h, fit, format, q asks for an image variant, rendered once \
and kept.",
        ))
        .parameter(param(ParameterIn::Path, "account", "The account's id"))
        .parameter(param(ParameterIn::Path, "file", "The file's id"))
        .parameter(param(ParameterIn::Path, "name", "The file's name"))
        .parameter(param(
            ParameterIn::Query,
            "expires",
            "Signed URLs: expiry, unix seconds",
        ))
        .parameter(param(
            ParameterIn::Query,
            "signature",
            "Signed URLs: the signature",
        ))
        .parameter(image_param(
            "w",
            "Image variant: width in pixels",
            Some((1, 4096)),
            None,
        ))
        .parameter(image_param(
            "h",
            "Image variant: height in pixels",
            Some((1, 4096)),
            None,
        ))
        .parameter(image_param(
            "fit",
            "Image variant: cover (crop to the box), contain (letterbox), inside (within the box, \
never enlarged; the default), fill (stretch)",
            None,
            Some("^(cover|contain|inside|fill)$"),
        ))
        .parameter(image_param(
            "format",
            "Image variant: auto (AVIF or WebP as Accept allows, else the source's format; Vary: \
Accept), webp, avif, jpeg, png; default the source's (PNG for a GIF)",
            None,
            Some("^(auto|webp|avif|jpeg|jpg|png)$"),
        ))
        .parameter(image_param(
            "q",
            "Image variant: quality (default 80)",
            Some((1, 100)),
            None,
        ))
        .responses(
            ResponsesBuilder::new()
                .response(
                    "200",
                    ResponseBuilder::new()
                        .description("The bytes, with the file's type")
                        .header(
                            "Content-Digest",
                            HeaderBuilder::new()
                                .schema(
                                    ObjectBuilder::new()
                                        .schema_type(SchemaType::new(Type::String))
                                        .pattern(Some("^sha-256=:[A-Za-z0-9+/]{43}=:$")),
                                )
                                .description(Some(
                                    "`sha-256=:<base64>:`, the file's SHA-256 (RFC 9530); \
only on whole-file answers, never on 206 or 304",
                                ))
                                .build(),
                        )
                        .content("*/*", bytes())
                        .build(),
                )
                .response(
                    "206",
                    ResponseBuilder::new()
                        .description("One byte range")
                        .content("*/*", bytes())
                        .build(),
                )
                .response(
                    "304",
                    ResponseBuilder::new().description("Not modified").build(),
                )
                .response(
                    "400",
                    error(
                        "Image variant refused: a parameter out of range, not an image, a source \
over images.max_source_pixels, the file's variants at their cap, or variants turned off",
                    ),
                )
                .response("403", error("Private file without a valid signature"))
                .response("404", error("No such file (or deleted, or expired)"))
                .response("416", error("Range outside the file"))
                .response(
                    "503",
                    error(
                        "Image variant: the render queue is full; or every download buffer of \
server.memory_budget stayed in use for server.stall_timeout. Retry-After says when to retry",
                    ),
                ),
        )
        .build()
}

/// An optional query parameter of an image variant: a whole number in
/// `range`, or a string matching `pattern`.
fn image_param(
    name: &str,
    description: &str,
    range: Option<(u32, u32)>,
    pattern: Option<&str>,
) -> utoipa::openapi::path::Parameter {
    let schema = match range {
        Some((min, max)) => ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::Integer))
            .minimum(Some(min))
            .maximum(Some(max)),
        None => ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .pattern(pattern),
    };
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

/// The document, as served.
pub(crate) fn document() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// `GET /v1/openapi.json`, the Swagger UI at `/v1/docs`, and `/` sending a
/// visitor there.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::from(SwaggerUi::new("/v1/docs").url("/v1/openapi.json", document())).route(
        "/",
        axum::routing::get(|| async { axum::response::Redirect::to("/v1/docs/") }),
    )
}
