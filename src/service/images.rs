//! Image variants on the CDN (docs/api.md, "Image variants"): which variant
//! a request names, found in the blob store or rendered once and kept there.
//!
//! A render is admitted by the node's [`RenderQueue`] (its slots,
//! `images.concurrency`, and its byte budget, `images.memory`, fair across
//! the accounts that own the files): the source is spooled to a file, its
//! header read (`images::prepare`: refused there, before any pixel is
//! decoded, when it is not an image, too large, or too short for what it
//! claims) and its render's bytes estimated; then it waits for its turn, or
//! gets 503 with `Retry-After`, and runs on the blocking pool. Identical
//! requests in flight share one render: the first renders while the others
//! wait on the variant's lock, then find it stored.

use super::cdn::{self, Counted, Found};
use super::error::ServiceError;
use super::render_queue::{Refused, RenderQueue};
use super::render_threads::RenderThreads;
use super::App;
use crate::db::{FileRow, VariantOutcome, VariantRow};
use crate::domain::ids;
use crate::domain::transform::{Output, SourceFormat, Transform};
use crate::images::{self, ImageError, Limits};
use crate::storage::BlobStream;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// Requests that may wait for a render, per render slot.
const WAITING_PER_RENDER: usize = 8;
/// The longest a request waits for its turn before its 503.
const QUEUE_WAIT: Duration = Duration::from_secs(5);
/// Bytes a source may have per pixel allowed (16-bit RGBA, uncompressed),
/// beyond a slack for metadata: a larger file is refused unread.
const SOURCE_BYTES_PER_PIXEL: u64 = 8;
const SOURCE_SLACK: u64 = 16 << 20;

/// Failed renders of one file's variants after which its next variants are
/// refused at once (its bytes do not decode), for [`REFUSED_FOR`]: a
/// corrupt source cost a render each time, at every size asked for.
const REFUSALS_REMEMBERED: u32 = 2;
const REFUSED_FOR: Duration = Duration::from_mins(10);

/// Bytes of small variants kept in memory, all together.
const CACHE_BYTES: u64 = 32 << 20;
/// A variant larger than this is streamed from the store each time.
const CACHE_ITEM_MAX: u64 = 256 << 10;

/// A stored variant with its bytes.
pub(crate) type Cached = Arc<(VariantRow, Bytes)>;

/// The render pool's state: its queue (slots, byte budget, fair order),
/// the variants being rendered now (one lock each, shared by the requests
/// that want it), and the small variants served lately, by file and key.
/// A variant's bytes never change (a file's never do, and its id is never
/// reused), and each request still looks the file up first, so a kept
/// variant of a file deleted since is never served.
#[derive(Debug)]
pub(crate) struct Renders {
    queue: Arc<RenderQueue>,
    /// Where renders run: `concurrency` threads of their own.
    threads: RenderThreads,
    rendering: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
    cached: moka::sync::Cache<String, Cached>,
    /// Files whose renders failed for their bytes: how often, and why.
    refused: moka::sync::Cache<String, (u32, String)>,
}

impl Renders {
    pub(crate) fn new(concurrency: usize, memory: u64) -> Renders {
        Renders {
            queue: Arc::new(RenderQueue::new(concurrency, memory, WAITING_PER_RENDER)),
            threads: RenderThreads::new(concurrency),
            rendering: Mutex::default(),
            cached: moka::sync::Cache::builder()
                .max_capacity(CACHE_BYTES)
                .weigher(|_, v: &Cached| u32::try_from(v.1.len() + 256).unwrap_or(u32::MAX))
                .build(),
            refused: moka::sync::Cache::builder()
                .max_capacity(16_384)
                .time_to_live(REFUSED_FOR)
                .build(),
        }
    }

    /// Why the variants of `file` are refused at once now, if they are.
    fn refused(&self, file: &str) -> Option<String> {
        self.refused
            .get(file)
            .filter(|(n, _)| *n >= REFUSALS_REMEMBERED)
            .map(|(_, why)| why)
    }

    /// A render of `file` failed for its bytes (`why`).
    fn note_refusal(&self, file: &str, why: &str) {
        let n = self.refused.get(file).map_or(0, |(n, _)| n);
        self.refused
            .insert(file.to_string(), (n.saturating_add(1), why.to_string()));
    }

    /// The lock of one variant, made when nobody holds it (entries nobody
    /// holds are swept once there are 1,024).
    fn lock_of(&self, key: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self
            .rendering
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(held) = map.get(key).and_then(Weak::upgrade) {
            return held;
        }
        if map.len() >= 1024 {
            map.retain(|_, w| w.strong_count() > 0);
        }
        let made = Arc::new(tokio::sync::Mutex::new(()));
        map.insert(key.to_string(), Arc::downgrade(&made));
        made
    }
}

/// The queue's refusal as the client sees it.
fn refused_by_queue(refused: Refused) -> ServiceError {
    match refused {
        Refused::Busy => ServiceError::Unavailable(
            "the image renderer is busy; try again in a moment".to_string(),
        ),
        Refused::OverBudget { bytes, budget } => {
            ServiceError::BadRequest(ImageError::OverBudget { bytes, budget }.to_string())
        }
    }
}

/// The variant a request asks for, settled: its output format, its key
/// among the file's variants, and its ETag (known before any render, so a
/// conditional request is answered 304 at once).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) transform: Transform,
    pub(crate) output: Output,
    pub(crate) key: String,
    pub(crate) etag: String,
}

/// Settles the variant `t` of `row` for a request that accepts `accept`:
/// refused when variants are off or the file is not an image by its type.
pub(crate) fn plan(
    app: &App,
    row: &FileRow,
    t: Transform,
    accept: Option<&str>,
) -> Result<Plan, ServiceError> {
    if !app.config.images.enabled {
        return Err(ServiceError::bad_request(
            "image variants are turned off on this server (images.enabled)",
        ));
    }
    let source = source_format(&row.content_type).ok_or_else(|| {
        ServiceError::BadRequest(format!(
            "{} is not an image this service can transform (JPEG, PNG, WebP, GIF, AVIF)",
            row.content_type
        ))
    })?;
    let output = t.format.resolve(source, accept);
    let key = t.variant_key(output);
    let etag = format!("\"{}-{key}\"", row.sha256);
    Ok(Plan {
        transform: t,
        output,
        key,
        etag,
    })
}

/// The source format a content type names.
fn source_format(content_type: &str) -> Option<SourceFormat> {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    Some(match essence.to_ascii_lowercase().as_str() {
        "image/jpeg" | "image/jpg" | "image/pjpeg" => SourceFormat::Jpeg,
        "image/png" => SourceFormat::Png,
        "image/webp" => SourceFormat::Webp,
        "image/gif" => SourceFormat::Gif,
        "image/avif" => SourceFormat::Avif,
        _ => return None,
    })
}

/// The stored variant `plan` of the file `found`, rendered and stored
/// first when there is none yet.
pub(crate) async fn variant(
    app: &Arc<App>,
    found: &Found,
    plan: &Plan,
) -> Result<VariantRow, ServiceError> {
    let row = &found.row;
    let cap = app.config.images.variants_per_file;
    let (stored, count) = app.meta.variant(&row.id, &plan.key).await?;
    if let Some(v) = stored {
        return Ok(v);
    }
    if count >= cap {
        return Err(too_many(cap));
    }
    let lock = app.renders.lock_of(&format!("{}/{}", row.id, plan.key));
    let _rendering = lock.lock().await;
    // Another request may have rendered it while this one waited.
    if let (Some(v), _) = app.meta.variant(&row.id, &plan.key).await? {
        return Ok(v);
    }
    let limits = Limits {
        max_source_pixels: app.config.images.max_source_pixels,
        memory: app.config.images.memory,
    };
    let max_bytes = limits
        .max_source_pixels
        .saturating_mul(SOURCE_BYTES_PER_PIXEL)
        .saturating_add(SOURCE_SLACK);
    if row.size > max_bytes {
        return Err(ServiceError::BadRequest(format!(
            "the image is {} bytes, more than an image of at most {} pixels can hold",
            row.size, limits.max_source_pixels
        )));
    }
    // A variant is written as an upload is: not into the free-space
    // reserve (anyone may ask for the variants of a public image); its
    // source may be copied to the spool first.
    app.disk.check_room(row.size)?;
    if let Some(why) = app.renders.refused(&row.id) {
        return Err(ServiceError::BadRequest(why));
    }
    // Counted among the waiting while the source is spooled and its
    // header read: a flood is turned away before it costs a spool.
    let mut place = app
        .renders
        .queue
        .enter(&row.account_id)
        .map_err(refused_by_queue)?;
    let source = found.spool(app).await?;
    let (t, output) = (plan.transform, plan.output);
    let file_id = row.id.clone();
    let refused = move |app: &App, e: &ImageError| {
        if e.is_the_sources() {
            app.renders.note_refusal(&file_id, &e.to_string());
        }
        refusal(e)
    };
    let path = source.to_path_buf();
    let job = tokio::task::spawn_blocking(move || images::prepare(&path, &t, output, &limits))
        .await
        .map_err(|e| ServiceError::Internal(format!("image header task: {e}")))?
        .map_err(|e| refused(app, &e))?;
    place
        .admit(job.bytes(), QUEUE_WAIT)
        .await
        .map_err(refused_by_queue)?;
    let dir = app.spool_dir.clone();
    let app2 = Arc::clone(app);
    let rendered = app
        .renders
        .threads
        .run(move || {
            // Held by the render itself, not by the request: a client that hangs
            // up drops the request, but the render runs on and stays counted.
            let _place = place;
            let _source = source;
            let (bytes, output) = job.render().map_err(|e| refused(&app2, &e))?;
            app2.disk.check_room(bytes.len() as u64)?;
            let mut out = tempfile::Builder::new()
                .prefix("variant-")
                .tempfile_in(&dir)
                .map_err(ServiceError::from_io)?;
            out.write_all(&bytes)
                .and_then(|()| out.as_file().sync_data())
                .map_err(ServiceError::from_io)?;
            Ok::<_, ServiceError>((out.into_temp_path(), bytes.len() as u64, output))
        })
        .await??;
    store(app, row, plan, rendered).await
}

/// Writes a rendered variant to the blob store and records it (its blob
/// guarded meanwhile, so that a crash leaves nothing behind for good).
async fn store(
    app: &App,
    row: &FileRow,
    plan: &Plan,
    (spool, size, output): (tempfile::TempPath, u64, Output),
) -> Result<VariantRow, ServiceError> {
    let now = app.clock.now_ms();
    let blob_key = format!("{}/{}", row.account_id, ids::variant_blob_id());
    app.meta.guard_upload(&blob_key, now).await?;
    app.store.put_file(&blob_key, spool, size).await?;
    let v = VariantRow {
        file_id: row.id.clone(),
        key: plan.key.clone(),
        blob_key: blob_key.clone(),
        size,
        // What was written: `format=auto` writes WebP where AVIF would be
        // too large to encode (images::MAX_AVIF_PIXELS).
        content_type: output.content_type().to_string(),
        created_at: now,
    };
    let outcome = app
        .meta
        .put_variant(v.clone(), app.config.images.variants_per_file)
        .await?;
    if outcome != VariantOutcome::Stored {
        // Ours is not recorded: its guard is still queued; make it due now.
        app.meta.schedule_blob_deletion(&blob_key, now).await?;
    }
    match outcome {
        VariantOutcome::Stored => Ok(v),
        VariantOutcome::Exists(first) => Ok(first),
        VariantOutcome::Full => Err(too_many(app.config.images.variants_per_file)),
        VariantOutcome::FileGone => Err(ServiceError::not_found()),
    }
}

fn too_many(cap: u32) -> ServiceError {
    ServiceError::BadRequest(format!(
        "this file has its {cap} image variants already (images.variants_per_file): \
         use one of the sizes it has"
    ))
}

/// A render's failure: the image's fault is a 400, ours a 500.
fn refusal(e: &ImageError) -> ServiceError {
    match e {
        ImageError::Encode(_) => ServiceError::Internal(e.to_string()),
        _ => ServiceError::BadRequest(e.to_string()),
    }
}

/// The variant `key` of the file `file_id` with its bytes, if it is kept
/// in memory (the CDN's hot path asks, `server::hot`): no lookup, no read,
/// no render.
pub(crate) fn kept_variant(app: &App, file_id: &str, key: &str) -> Option<Cached> {
    cdn::with_key(file_id, key, |k| app.renders.cached.get(k))
}

/// The variant `plan` names, and its bytes when it is small enough to be
/// kept in memory (from there when it is: no metadata or store read).
pub(crate) async fn variant_with_bytes(
    app: &Arc<App>,
    found: &Found,
    plan: &Plan,
) -> Result<(VariantRow, Option<Bytes>), ServiceError> {
    if let Some(hit) = kept_variant(app, &found.row.id, &plan.key) {
        return Ok((hit.0.clone(), Some(hit.1.clone())));
    }
    let key = format!("{}/{}", found.row.id, plan.key);
    let v = variant(app, found, plan).await?;
    if v.size > CACHE_ITEM_MAX {
        return Ok((v, None));
    }
    let mut stream = cdn::blob(app, &v.blob_key, 0, v.size).await?;
    let mut buf = BytesMut::with_capacity(usize::try_from(v.size).unwrap_or(0));
    while let Some(chunk) = stream.next().await {
        buf.extend_from_slice(
            &chunk.map_err(|e| {
                ServiceError::Internal(format!("reading variant {}: {e}", v.blob_key))
            })?,
        );
    }
    if buf.len() as u64 != v.size {
        return Err(ServiceError::Internal(format!(
            "variant {} is {} bytes in the store, not {}",
            v.blob_key,
            buf.len(),
            v.size
        )));
    }
    let bytes = buf.freeze();
    app.renders
        .cached
        .insert(key, Arc::new((v.clone(), bytes.clone())));
    Ok((v, Some(bytes)))
}

/// The `len` bytes from `offset` of a stored variant, counted as the
/// account's bandwidth as they are sent.
pub(crate) async fn content(
    app: &Arc<App>,
    v: &VariantRow,
    account_id: &str,
    offset: u64,
    len: u64,
) -> Result<Counted<BlobStream>, ServiceError> {
    let stream = cdn::blob(app, &v.blob_key, offset, len).await?;
    Ok(Counted::new(
        stream,
        account_id.to_string(),
        Arc::clone(app),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_name_their_format() {
        assert_eq!(source_format("image/jpeg"), Some(SourceFormat::Jpeg));
        assert_eq!(source_format("IMAGE/PNG; x=1"), Some(SourceFormat::Png));
        assert_eq!(source_format("image/svg+xml"), None);
        assert_eq!(source_format("text/plain"), None);
    }

    #[test]
    fn a_source_that_failed_twice_is_refused_at_once() {
        let r = Renders::new(2, 1 << 30);
        assert_eq!(r.refused("f_1"), None);
        r.note_refusal("f_1", "the image could not be decoded: cut short");
        assert_eq!(r.refused("f_1"), None, "one failure may be the size asked");
        r.note_refusal("f_1", "the image could not be decoded: cut short");
        assert_eq!(
            r.refused("f_1").as_deref(),
            Some("the image could not be decoded: cut short")
        );
        assert_eq!(r.refused("f_2"), None);
    }

    #[test]
    fn one_lock_per_variant_while_held() {
        let renders = Renders::new(2, 1 << 30);
        let first = renders.lock_of("f/1");
        let again = renders.lock_of("f/1");
        assert!(Arc::ptr_eq(&first, &again));
        let other = renders.lock_of("f/2");
        assert!(!Arc::ptr_eq(&first, &other));
        drop((first, again));
        let fresh = renders.lock_of("f/1");
        assert_eq!(Arc::strong_count(&fresh), 1);
    }
}
