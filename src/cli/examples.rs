//! The EXAMPLES that end every command's `--help` and man page, one table
//! keyed by the command's path (`token create`), and the finishing touches
//! of the command tree: each command gets its examples after its exit codes,
//! and the help of the client commands leaves out the server-only flags
//! (`--config`, `--data-dir`: `serve` and `admin` still show them).

use std::fmt::Write as _;

/// Examples by command path ("" is `filestore` itself); each a command
/// line, then what it does.
pub(crate) const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    ("", &[
        ("filestore login --server https://files.example.com", "save a server and key (asked for)"),
        ("filestore upload report.pdf --folder docs", "upload a file"),
        ("filestore list --folder docs", "list a folder"),
    ]),
    ("serve", &[
        ("filestore serve --data-dir /var/lib/filestore", "run the server on a data dir"),
        ("filestore serve --config /etc/filestore.toml --migrate", "run it on a config file, migrating the database"),
    ]),
    ("admin", &[
        ("filestore admin account list", "list the accounts"),
        ("filestore admin key create --account acme --kind secret", "make a secret key"),
    ]),
    ("admin account", &[("filestore admin account create --name acme --plan pro", "create an account")]),
    ("admin account create", &[("filestore admin account create --name acme --plan pro", "create an account on plan pro")]),
    ("admin account list", &[("filestore admin account list --json", "every account, one JSON line each")]),
    ("admin account set", &[("filestore admin account set acme --plan business", "move an account to another plan")]),
    ("admin account delete", &[("filestore admin account delete acme --yes", "delete an account and everything it holds")]),
    ("admin account usage", &[("filestore admin account usage acme --json", "an account's usage record")]),
    ("admin key", &[("filestore admin key list --account acme", "an account's keys")]),
    ("admin key create", &[
        ("filestore admin key create --account acme --kind secret", "a secret key (printed once)"),
        ("filestore admin key create --account acme --kind public --origin https://app.example.com", "a public key for a web page"),
    ]),
    ("admin key list", &[("filestore admin key list --account acme", "the keys of one account (never their secrets)")]),
    ("admin key revoke", &[("filestore admin key revoke key_0123456789abcdef01234567", "revoke a key at once")]),
    ("admin key s3", &[("filestore admin key s3 key_0123456789abcdef01234567 --json", "a secret key's S3 credential again")]),
    ("admin webhook", &[("filestore admin webhook list", "every subscription")]),
    ("admin webhook create", &[("filestore admin webhook create --account acme --url https://hooks.example.com/fs", "send an account's file events to a URL")]),
    ("admin webhook list", &[("filestore admin webhook list --account acme", "one account's subscriptions")]),
    ("admin webhook delete", &[("filestore admin webhook delete wh_0123456789abcdef01234567", "stop a subscription")]),
    ("admin plan", &[("filestore admin plan list", "the plans in force")]),
    ("admin plan list", &[("filestore admin plan list --json", "the plans, one JSON line each")]),
    ("admin plan apply", &[("filestore admin plan apply --config /etc/filestore.toml", "write the config's plans to the database")]),
    ("admin migrate", &[("filestore admin migrate --config /etc/filestore.toml", "bring the database schema up to date")]),
    ("admin backup", &[
        ("filestore admin backup /var/backups/filestore --json", "back up the metadata and every file's bytes while serving"),
        ("filestore admin backup s3://backups/filestore --endpoint https://s3.example.com", "back up into a bucket"),
    ]),
    ("admin restore", &[
        ("filestore admin restore /var/backups/filestore --data-dir /tmp/drill", "restore the newest backup into an empty data dir"),
        ("filestore admin restore /var/backups/filestore --database postgres://db.internal/filestore", "move to PostgreSQL"),
    ]),
    ("admin verify", &[
        ("filestore admin verify --json --rate 16MiB", "check every file's bytes, at most 16 MiB a second"),
        ("filestore admin verify --repair-from /var/backups/filestore", "put back missing or damaged files from a backup"),
    ]),
    ("login", &[
        ("filestore login --server https://files.example.com", "save a profile; the key is asked for"),
        ("filestore login --server https://files.example.com --api-key - --profile ci < key.txt", "a key from a file, as profile ci"),
    ]),
    ("logout", &[
        ("filestore logout", "forget the profile in use"),
        ("filestore logout --profile ci", "forget profile ci"),
    ]),
    ("whoami", &[
        ("filestore whoami", "server, account, key and plan in use"),
        ("filestore whoami --json --profile ci", "the same for profile ci, as JSON"),
    ]),
    ("profile", &[("filestore profile list", "the saved profiles")]),
    ("profile list", &[("filestore profile list --json", "the saved profiles, one JSON line each")]),
    ("upload", &[
        ("filestore upload photo.jpg", "upload a file to the root"),
        ("filestore upload -r dist --folder releases/v1.2", "a directory, its tree as folders"),
        ("filestore upload app.tar.gz --folder releases/latest --replace", "re-publish a path (one file stays there)"),
        ("filestore upload notes.txt --no-clobber", "only if the path holds no file yet"),
        ("tar cz src | filestore upload - --name src.tar.gz", "standard input"),
    ]),
    ("list", &[
        ("filestore list", "the newest 50 files"),
        ("filestore list --folder /", "the root: its files and top-level folders"),
        ("filestore list --folder docs -r --all --json", "a folder and below, every file, as JSON Lines"),
    ]),
    ("get", &[
        ("filestore get f_9Jc2mXb0QbKf1eTt4nA7wZ", "a file's record by id"),
        ("filestore get releases/latest/app.tar.gz --json", "the newest file at a path, as JSON"),
    ]),
    ("download", &[
        ("filestore download releases/latest/app.tar.gz", "the newest file at a path, into the current directory"),
        ("filestore download f_9Jc2mXb0QbKf1eTt4nA7wZ -o - | tar xz", "by id, to standard output"),
        ("filestore download --folder docs -o ./docs", "a folder and below (resumable)"),
    ]),
    ("sign", &[
        ("filestore sign reports/q1.pdf --expires 7d", "a week-long link to a private file"),
        ("filestore sign f_9Jc2mXb0QbKf1eTt4nA7wZ --width 320 --format auto", "a link to a 320 px wide variant"),
    ]),
    ("token", &[("filestore token create --folder avatars --type 'image/*'", "a URL a browser uploads an image to")]),
    ("token create", &[
        ("filestore token create --folder avatars --type 'image/*' --max-size 5MiB", "one image upload, up to 5 MiB"),
        ("filestore token create --max-uploads 10 --expires 15m --json", "ten uploads within 15 minutes; the record"),
    ]),
    ("token list", &[("filestore token list --json", "the active upload tokens, one JSON line each")]),
    ("token revoke", &[("filestore token revoke ut_0123456789abcdef01234567", "refuse a token from now on")]),
    ("mv", &[
        ("filestore mv drafts/q1.pdf --folder reports", "move the newest file at a path"),
        ("filestore mv f_9Jc2mXb0QbKf1eTt4nA7wZ --name final.pdf", "rename a file by id"),
    ]),
    ("cp", &[("filestore cp reports/q1.pdf --folder archive/2026", "copy a file (the server copies the bytes)")]),
    ("delete", &[
        ("filestore delete f_9Jc2mXb0QbKf1eTt4nA7wZ", "delete a file by id"),
        ("filestore delete releases/old/app.tar.gz", "delete every file at a path"),
        ("filestore delete --folder tmp --recursive --yes", "delete a folder and below, without asking"),
    ]),
    ("sync", &[
        ("filestore sync ./site --folder www", "publish a directory (new and changed files only)"),
        ("filestore sync ./site --folder www --delete --dry-run", "show what a mirror would do, change nothing"),
    ]),
    ("usage", &[("filestore usage --json", "this period's usage and the plan's limits")]),
    ("s3", &[("eval \"$(filestore s3 credentials)\" && aws s3 ls", "use the key's S3 credential with aws-cli")]),
    ("s3 credentials", &[
        ("eval \"$(filestore s3 credentials)\"", "set AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL and AWS_REGION"),
        ("filestore s3 credentials --json --profile ci", "the credential, endpoint and region of profile ci, as JSON"),
    ]),
    ("health", &[("filestore health --server http://localhost:8080", "check a server (exit 0 when ok)")]),
    ("completions", &[("filestore completions bash > ~/.local/share/bash-completion/completions/filestore", "install bash completions")]),
];

/// The examples of the command at `path`.
pub(crate) fn of(path: &str) -> Option<&'static [(&'static str, &'static str)]> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, e)| *e)
}

/// The EXAMPLES section as `--help` shows it.
fn help_text(examples: &[(&str, &str)]) -> String {
    let mut out = String::from("Examples:\n");
    for (line, what) in examples {
        let _ = write!(out, "  # {what}\n  {line}\n");
    }
    out.pop();
    out
}

/// The flags only `serve` and `admin` read, left out of the other commands' help.
const SERVER_ONLY: &[&str] = &["config", "data_dir"];

/// The commands that read [`SERVER_ONLY`] (and their subcommands).
const SERVER_SIDE: &[&str] = &["serve", "admin"];

/// The command tree, finished: every command's help ends with its
/// examples, and the client commands' help leaves out the server-only
/// flags. Those stay global (accepted before or after any subcommand's
/// name), hidden; `serve` and `admin` get visible copies of them, global
/// within them, whose values clap carries up to the top as a global's.
pub(crate) fn finish(mut cmd: clap::Command) -> clap::Command {
    let shown: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| SERVER_ONLY.contains(&a.get_id().as_str()))
        .cloned()
        .collect();
    for id in SERVER_ONLY {
        cmd = cmd.mut_arg(*id, |a| a.hide(true));
    }
    for name in SERVER_SIDE {
        cmd = cmd.mut_subcommand(*name, |mut sub| {
            for arg in &shown {
                sub = sub.arg(arg.clone().global(true));
            }
            sub
        });
    }
    walk(cmd, "")
}

fn walk(mut cmd: clap::Command, path: &str) -> clap::Command {
    if let Some(examples) = of(path) {
        let text = help_text(examples);
        let short = join(cmd.get_after_help().map(ToString::to_string), &text);
        let long = join(cmd.get_after_long_help().map(ToString::to_string), &text);
        cmd = cmd.after_help(short).after_long_help(long);
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        let sub_path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(name, |s| walk(s, &sub_path));
    }
    cmd
}

fn join(before: Option<String>, examples: &str) -> String {
    match before {
        Some(b) if !b.is_empty() => format!("{b}\n\n{examples}"),
        _ => examples.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command (but clap's `help`) has examples, and its help ends with them.
    #[test]
    fn every_command_ends_with_examples() {
        fn check(cmd: &mut clap::Command, path: &str, seen: &mut usize) {
            let help = cmd.render_long_help().to_string();
            let examples = of(path).unwrap_or_else(|| panic!("no examples for {path:?}"));
            let last = examples.last().unwrap().0;
            assert!(
                help.trim_end().ends_with(last),
                "{path:?} help does not end with its examples:\n{help}"
            );
            *seen += 1;
            let names: Vec<String> = cmd
                .get_subcommands()
                .filter(|s| s.get_name() != "help")
                .map(|s| s.get_name().to_string())
                .collect();
            for name in names {
                let sub = cmd.find_subcommand_mut(&name).unwrap();
                let p = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path} {name}")
                };
                check(sub, &p, seen);
            }
        }
        let mut cmd = crate::cli::command();
        let mut seen = 0;
        check(&mut cmd, "", &mut seen);
        assert!(seen > 30, "{seen}");
    }

    #[test]
    fn client_help_leaves_out_server_flags() {
        let mut cmd = crate::cli::command();
        for sub in ["upload", "list", "login", "token"] {
            let help = cmd
                .find_subcommand_mut(sub)
                .unwrap()
                .render_long_help()
                .to_string();
            for flag in [
                "--data-dir",
                "--config",
                "--listen",
                "--metrics-listen",
                "--migrate",
            ] {
                assert!(!help.contains(flag), "{sub} help shows {flag}:\n{help}");
            }
        }
        let serve = cmd
            .find_subcommand_mut("serve")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(
            serve.contains("--data-dir") && serve.contains("--listen"),
            "{serve}"
        );
    }
}
