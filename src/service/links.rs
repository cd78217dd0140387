//! Where the CDN serves a file: the URL every door hands out for it.

use super::App;
use crate::domain::files::StoredFile;
use crate::domain::PATH_SEGMENT;
use percent_encoding::utf8_percent_encode;

/// `{cdn_url}/p/<account>/<path>`: the stable link of the file's path,
/// which serves whatever file is newest there (docs/api.md, "Paths and
/// stable links"); each segment percent-encoded.
pub(crate) fn cdn_stable_url(app: &App, f: &StoredFile) -> String {
    let mut url = format!("{}/p/{}", app.config.cdn_url, f.account_id);
    for segment in f.folder.iter().flat_map(|f| f.split('/')) {
        url.push('/');
        url.extend(utf8_percent_encode(segment, PATH_SEGMENT));
    }
    url.push('/');
    url.extend(utf8_percent_encode(&f.name, PATH_SEGMENT));
    url
}

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
