//! Generated documentation: man pages (clap_mangen: `filestore.1` and one page
//! per subcommand, each with EXIT STATUS and ENVIRONMENT sections) and shell
//! completion scripts (clap_complete). `tests/generated_docs.rs` keeps the
//! committed `man/` and `completions/` equal to what these produce.

use clap_complete::Shell;
use clap_mangen::Man;
use std::fmt::Write as _;

/// The environment variables the command line reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("FILESTORE_URL", "Server URL of the client commands, when --server is not given."),
    ("FILESTORE_API_KEY", "API key of the client commands, when --api-key is not given."),
    ("FILESTORE_PROFILE", "Profile of the client config file, when --profile is not given (default: default)."),
    ("FILESTORE_CLIENT_CONFIG", "Path of the client config file (default: config.toml in the platform config directory, e.g. ~/.config/filestore/config.toml)."),
    ("FILESTORE_RETRIES", "Default of --retries."),
    ("FILESTORE_CONFIG", "Server config file of serve and admin, when --config is not given."),
    ("FILESTORE_DATA_DIR", "Data directory of serve and admin, when --data-dir is not given."),
    ("CI, TERM", "CI=true or TERM=dumb turn progress bars into one plain line per finished file."),
    ("RUST_LOG", "Log filter of the diagnostics written to stderr (e.g. debug)."),
    ("TOKIO_WORKER_THREADS", "Runtime threads of serve and the clients (default: one per core); with 1, serve runs the current-thread scheduler. A whole number of at least 1."),
];

/// Escapes text for roff: backslashes, hyphens, and a leading dot or quote.
fn roff_text(s: &str) -> String {
    let escaped = s.replace('\\', "\\\\").replace('-', "\\-");
    if escaped.starts_with('.') || escaped.starts_with('\'') {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// A help-text phrase as a sentence: capitalized, with a final period.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// A `.SH` section of tagged paragraphs.
fn tagged_section(title: &str, items: &[(&str, &str)]) -> String {
    let mut out = format!(".SH \"{title}\"\n");
    for (tag, text) in items {
        let _ = write!(
            out,
            ".TP\n\\fB{}\\fR\n{}\n",
            roff_text(tag),
            roff_text(text)
        );
    }
    out
}

/// Renders one man page: clap_mangen's sections, then ours (`path`: the
/// command's path, for its EXAMPLES).
fn render(cmd: clap::Command, path: &str) -> std::io::Result<(String, Vec<u8>)> {
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let has_subs = cmd.get_subcommands().any(|s| !s.is_hide_set());
    let has_version = cmd.get_version().is_some();
    let man = Man::new(cmd)
        .source(concat!("filestore ", env!("CARGO_PKG_VERSION")))
        .manual("filestore manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if has_args {
        man.render_options_section(&mut out)?;
    }
    if has_subs {
        man.render_subcommands_section(&mut out)?;
    }
    let statuses: Vec<(&str, String)> = super::exit_codes::EXIT_CODES
        .iter()
        .map(|(code, text)| (*code, sentence(text)))
        .collect();
    let statuses: Vec<(&str, &str)> = statuses.iter().map(|(c, t)| (*c, t.as_str())).collect();
    out.extend_from_slice(tagged_section("EXIT STATUS", &statuses).as_bytes());
    out.extend_from_slice(b".PP\nErrors are written to standard error as one line: \\fBerror: <code>: <message>\\fR.\n");
    out.extend_from_slice(tagged_section("ENVIRONMENT", ENVIRONMENT).as_bytes());
    if let Some(examples) = super::examples::of(path) {
        let items: Vec<(&str, String)> = examples
            .iter()
            .map(|(line, what)| (*line, sentence(what)))
            .collect();
        let items: Vec<(&str, &str)> = items.iter().map(|(l, w)| (*l, w.as_str())).collect();
        out.extend_from_slice(tagged_section("EXAMPLES", &items).as_bytes());
    }
    if has_version {
        man.render_version_section(&mut out)?;
    }
    Ok((man.get_filename(), dedup_preamble(&out)))
}

/// Keeps the first of the `.ie`/`.el` string definitions that clap_mangen
/// repeats at the top of every section rendered on its own.
fn dedup_preamble(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    let mut seen = std::collections::HashSet::new();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let definition = line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq");
        if definition && !seen.insert(line.to_string()) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.into_bytes()
}

/// Every man page, as (file name, content): the command and its subcommands.
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    fn walk(
        cmd: &clap::Command,
        path: &str,
        out: &mut Vec<(String, Vec<u8>)>,
    ) -> std::io::Result<()> {
        out.push(render(cmd.clone(), path)?);
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let sub_path = if path.is_empty() {
                sub.get_name().to_string()
            } else {
                format!("{path} {}", sub.get_name())
            };
            walk(sub, &sub_path, out)?;
        }
        Ok(())
    }
    use clap::CommandFactory;
    let mut cmd = super::examples::finish(super::Cli::command().disable_help_subcommand(true));
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", &mut out)?;
    Ok(out)
}

/// Every completion script, as (file name, content).
pub fn completion_scripts() -> Vec<(String, Vec<u8>)> {
    let files = [
        (Shell::Bash, "filestore.bash"),
        (Shell::Zsh, "_filestore"),
        (Shell::Fish, "filestore.fish"),
        (Shell::Elvish, "filestore.elv"),
        (Shell::PowerShell, "_filestore.ps1"),
    ];
    files
        .into_iter()
        .map(|(shell, name)| {
            (
                name.to_string(),
                super::completions::script(shell, super::command()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_escapes() {
        assert_eq!(roff_text(".x-y\\"), "\\&.x\\-y\\\\");
        assert_eq!(sentence("ok"), "Ok.");
        assert_eq!(sentence("not found (404)."), "Not found (404).");
    }

    #[test]
    fn every_page_documents_exit_codes() {
        let pages = man_pages().unwrap();
        let names: Vec<_> = pages.iter().map(|(n, _)| n.as_str()).collect();
        for want in ["filestore.1", "filestore-upload.1", "filestore-health.1"] {
            assert!(names.contains(&want), "{names:?}");
        }
        for (name, page) in &pages {
            let text = String::from_utf8_lossy(page);
            assert!(text.contains(".SH \"EXIT STATUS\""), "{name}");
            // The same words as --help.
            assert!(
                text.contains("Server or network error (5xx, connection failures"),
                "{name}"
            );
        }
        assert!(
            super::super::exit_codes::EXIT_CODES_LONG.contains("  6  server or network error (5xx")
        );
    }
}
