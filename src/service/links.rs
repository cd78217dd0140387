//! Where the CDN serves a file: the URL every door hands out for it.

use super::App;
use crate::domain::files::StoredFile;
use crate::domain::PATH_SEGMENT;
use percent_encoding::utf8_percent_encode;

/// `{cdn_url}/live/<account>/<file>/<name>`.
pub(crate) fn cdn_path_url(app: &App, f: &StoredFile) -> String {
    format!(
        "{}/live/{}/{}/{}",
        app.config.cdn_url,
        f.account_id,
        f.id,
        utf8_percent_encode(&f.name, PATH_SEGMENT)
    )
}
