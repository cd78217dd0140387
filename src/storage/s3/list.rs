//! Every blob key under the store's prefix (`admin verify`'s orphans), a
//! ListObjectsV2 page of 1,000 at a time; objects that are no blob key
//! (another program's, under the prefix) are left out.

use super::call::{backend, within, REQUEST_TIMEOUT};
use super::S3Store;
use crate::storage::{valid_key, StorageError};

impl S3Store {
    pub(super) async fn keys(&self) -> Result<Vec<String>, StorageError> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let request = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(&self.prefix)
                .set_continuation_token(token.take())
                .send();
            let page = within(REQUEST_TIMEOUT, request).await?.map_err(backend)?;
            keys.extend(
                page.contents()
                    .iter()
                    .filter_map(|o| o.key()?.strip_prefix(self.prefix.as_str()))
                    .filter(|k| valid_key(k))
                    .map(str::to_string),
            );
            match page.next_continuation_token() {
                Some(t) if page.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => return Ok(keys),
            }
        }
    }
}
