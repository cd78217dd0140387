//! The exit statuses of the command line and their meaning
//! (docs/decisions.md, "Command line"): one table, the source of `--help`
//! and the man pages' EXIT STATUS.

/// One line about the exit codes, for `-h`.
pub(crate) const EXIT_CODES_SHORT: &str =
    "Exit codes: 0 ok, 1 other error, 2 usage, 3 unauthorized/forbidden, \
4 not found, 5 limit (413, 429), 6 server or network error.";

/// Defines, from one table, [`EXIT_CODES`] (for the man pages) and the
/// `exit_codes_help!` literal (for `--help`, through `concat!`).
macro_rules! exit_codes {
    ($(($code:literal, $text:literal)),* $(,)?) => {
        /// The exit statuses and their meaning (docs/decisions.md, "Command line"): the one source
        /// of `--help` and the man pages' EXIT STATUS.
        pub(crate) const EXIT_CODES: &[(&str, &str)] = &[$(($code, $text)),*];

        /// The exit codes in full as a string literal, ending with the
        /// form of the error line.
        macro_rules! exit_codes_help {
            () => {
                concat!(
                    "Exit codes:\n",
                    $("  ", $code, "  ", $text, "\n",)*
                    "\n",
                    "Errors are printed to stderr as one line: error: <code>: <message>"
                )
            };
        }
    };
}

exit_codes! {
    ("0", "ok"),
    ("1", "other error (a request refused as bad (400), a local file error)"),
    ("2", "usage error (bad flags or values, no server or API key configured)"),
    ("3", "unauthorized or forbidden (401, 403): bad or revoked key, public key for a secret-key call"),
    ("4", "not found (404): no such file, deleted or expired"),
    ("5", "limit: file too large or storage quota (413), rate limit or monthly uploads after retries (429), a path that holds a file (409, upload --no-clobber)"),
    ("6", "server or network error (5xx, connection failures, timeouts, bad answers)"),
    ("130", "interrupted (Ctrl-C); a download keeps what it received and resumes on the next run"),
}

/// The exit codes in full, for `--help` (the man pages have them as EXIT STATUS).
pub(crate) const EXIT_CODES_LONG: &str = exit_codes_help!();

/// Shown after the top-level help.
pub(crate) const TOP_AFTER_HELP: &str = concat!(
    "Client settings: --server / --api-key, else FILESTORE_URL / FILESTORE_API_KEY, else the profile\n",
    "(--profile, FILESTORE_PROFILE, default \"default\") in the client config file written by\n",
    "`filestore login` (FILESTORE_CLIENT_CONFIG overrides its path).\n",
    "\n",
    exit_codes_help!()
);
