//! What the early quota checks of an account's uploads read lately on this
//! node (`upload::precheck_limits`). That check only refuses before the body
//! what is certain to be refused; the commit checks again, exactly, under
//! the account's lock. So an upload may be let in on a read made up to
//! [`FRESH`] before it, when that read admits its whole `Content-Length`
//! (its body then cannot pass the limit the check hands on either); any
//! other upload reads afresh, and only a fresh read refuses. Under load an
//! account's uploads then cost one early read per [`FRESH`], not one each
//! (on a database server, a statement each).

use crate::db::Commitments;
use std::time::Duration;

/// How old a read may be to admit an upload.
pub(crate) const FRESH: Duration = Duration::from_millis(100);

/// Accounts (and periods) kept at most.
const MAX_KEPT: u64 = 10_000;

/// The last early read of each account and period, for [`FRESH`].
#[derive(Debug)]
pub(crate) struct EarlyReads {
    kept: moka::sync::Cache<(String, String), Commitments>,
}

impl Default for EarlyReads {
    fn default() -> EarlyReads {
        EarlyReads {
            kept: moka::sync::Cache::builder()
                .max_capacity(MAX_KEPT)
                .time_to_live(FRESH)
                .build(),
        }
    }
}

impl EarlyReads {
    /// A read of `account`'s commitments in `period` made in the last [`FRESH`].
    pub(crate) fn get(&self, account: &str, period: &str) -> Option<Commitments> {
        self.kept.get(&(account.to_string(), period.to_string()))
    }

    /// Keeps a read just made.
    pub(crate) fn keep(&self, account: &str, period: &str, held: Commitments) {
        self.kept
            .insert((account.to_string(), period.to_string()), held);
    }
}
