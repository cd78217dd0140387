
use builtin;
use str;

set edit:completion:arg-completer[filestore] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'filestore'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'filestore'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand login 'Save a server and API key as a profile (checked against the server first)'
            cand logout 'Forget a saved profile (--profile NAME; default: the one in use)'
            cand whoami 'Show the server, account, key and plan in use'
            cand profile 'The saved client profiles'
            cand upload 'Upload files, directories (-r) or standard input (-)'
            cand list 'List files, newest first'
            cand get 'Show a file''s record (by id, or by path: the newest file there)'
            cand download 'Download a file''s content'
            cand sign 'Create a signed URL for a file (only the URL is printed)'
            cand token 'Upload tokens: URLs a browser uploads to without an API key'
            cand mv 'Rename or move a file (its id, bytes and checksum stay)'
            cand cp 'Copy a file to a new one (a new id; the same bytes, copied by the server)'
            cand delete 'Delete files permanently (by id, every file at a path, or a folder)'
            cand sync 'Publish a directory to a folder: upload what is new or changed, skip the rest'
            cand usage 'Show the account''s usage this billing period'
            cand s3 'The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with'
            cand health 'Check the server''s health (exit 0 only when ok)'
            cand completions 'Print a shell completion script'
            cand serve 'Run the server (API and CDN routes)'
            cand admin 'Operator commands: accounts and keys (on the server''s data dir)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;login'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --no-verify 'Save without checking the key against the server'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;logout'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;whoami'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;profile'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'List the saved profiles: name and server (never a key); * marks the one in use'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;profile;list'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;profile;help'= {
            cand list 'List the saved profiles: name and server (never a key); * marks the one in use'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;profile;help;list'= {
        }
        &'filestore;profile;help;help'= {
        }
        &'filestore;upload'= {
            cand --folder 'Folder to store the files in (directory contents go below it)'
            cand --name 'Name to store the file under (one input only; default for stdin: "stdin")'
            cand --expires 'Delete the files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)'
            cand --content-type 'Content type of the files (default: guessed by the server from the name)'
            cand --metadata 'Metadata of the files: KEY=VALUE, repeatable (keys a-z 0-9 _ -, at most 16 keys and 4 KiB in all); a key given twice keeps its last value'
            cand -j 'Files uploaded at the same time'
            cand --concurrency 'Files uploaded at the same time'
            cand --chunk-size 'Files of at least this size go through resumable (tus) uploads, sent in pieces of this size; an interrupted upload resumes on the next run of the same command for the same file (same path, size and modification time). Bytes, or 64MiB, 500MB, 1GiB...; 0 sends every file in one request'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand -r 'Upload the contents of directories, keeping their relative paths as folders'
            cand --recursive 'Upload the contents of directories, keeping their relative paths as folders'
            cand --private 'Make the files private (URL null; download through signed URLs)'
            cand --fail-fast 'Stop starting new uploads after the first failure'
            cand --replace 'Replace the files already at each path (folder/name) as the new one is stored'
            cand --no-clobber 'Refuse a file whose path (folder/name) already holds one (exit 5, error conflict)'
            cand --dry-run 'Check each file''s name and folder as the server would and say what would be uploaded; send nothing (exit 1 when something would be refused)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;list'= {
            cand --folder 'Only files in this folder (exact match; with -r, its subfolders too). Without -r, its subfolders holding files come first, every one of them ("PRE sub/" lines; {"folder": "F/sub"} with --json); "" or / is the root (its own files only)'
            cand --metadata 'Only files whose metadata has KEY=VALUE (exact match); repeatable, all must match'
            cand --limit 'Show at most this many files [default: 50; with --json, every file, so that a script never reads a list cut short]'
            cand --cursor 'Start after this cursor (from a previous listing)'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand -l 'Full ids and names, however wide the table gets'
            cand --long 'Full ids and names, however wide the table gets'
            cand -r 'With --folder: the files of its subfolders too (releases/v1.2 under releases)'
            cand --recursive 'With --folder: the files of its subfolders too (releases/v1.2 under releases)'
            cand --all 'Show every file, following the cursors (ignores --limit)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;get'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;download'= {
            cand --folder 'Download every file of this folder and below into -o DIR, the tree recreated; a rerun resumes what was cut off and skips what is complete'
            cand -o 'Where to write: a file (replaced), a directory (the file''s name in it, never replaced without --force), or "-" for standard output [default: the file''s name in the current directory]; with --folder, the directory to recreate the tree in'
            cand --output 'Where to write: a file (replaced), a directory (the file''s name in it, never replaced without --force), or "-" for standard output [default: the file''s name in the current directory]; with --folder, the directory to recreate the tree in'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand -f 'Replace an existing file of the same name (in the current directory or -o DIR; with --folder, a file in the tree whose bytes differ)'
            cand --force 'Replace an existing file of the same name (in the current directory or -o DIR; with --folder, a file in the tree whose bytes differ)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;sign'= {
            cand --expires 'Validity: 3600, 90s, 1m30s, 1.5h, 7d... (at most 7 days)'
            cand --width 'An image variant of this width in pixels (1-4096)'
            cand --height 'An image variant of this height in pixels (1-4096)'
            cand --fit 'How the variant fits WxH [default: inside]'
            cand --format 'The variant''s format (auto: AVIF or WebP as the browser accepts) [default: the source''s]'
            cand --quality 'The variant''s quality (1-100) [default: 80]'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;token'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Create an upload token; only its upload URL is printed (--json: the record)'
            cand list 'List the active upload tokens (not revoked, not expired), newest first; never a secret'
            cand revoke 'Revoke an upload token: refused at once (files already uploaded stay)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;token;create'= {
            cand --folder 'Folder of the files uploaded with it'
            cand --max-size 'Largest file: bytes, or 10MB, 5MiB... (default and at most: the plan''s)'
            cand --type 'Allowed type of the bytes: image/png or a family like image/* (which leaves out SVG); repeatable (default: any)'
            cand --max-uploads 'How many files it may upload'
            cand --expires 'How long it may be used: 900, 90s, 1m30s, 1.5h... (at most 1 day)'
            cand --file-expires 'Delete its files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)'
            cand --metadata 'Metadata of every file it uploads: KEY=VALUE, repeatable; these keys win over the uploader''s'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --private 'Make its files private (URL null; download through signed URLs)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;token;list'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;token;revoke'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;token;help'= {
            cand create 'Create an upload token; only its upload URL is printed (--json: the record)'
            cand list 'List the active upload tokens (not revoked, not expired), newest first; never a secret'
            cand revoke 'Revoke an upload token: refused at once (files already uploaded stay)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;token;help;create'= {
        }
        &'filestore;token;help;list'= {
        }
        &'filestore;token;help;revoke'= {
        }
        &'filestore;token;help;help'= {
        }
        &'filestore;mv'= {
            cand --folder 'The new folder ("" for the root)'
            cand --name 'The new name'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;cp'= {
            cand --folder 'The copy''s folder ("" for the root; default: the file''s)'
            cand --name 'The copy''s name (default: the file''s)'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --private 'Make the copy private (default: as the file is)'
            cand --public 'Make the copy public (default: as the file is)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;delete'= {
            cand --folder 'Delete every file in this folder and below (needs --recursive)'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand -r 'With --folder: its subfolders too (required: a folder goes whole)'
            cand --recursive 'With --folder: its subfolders too (required: a folder goes whole)'
            cand -y 'With --folder: do not ask (required off a terminal)'
            cand --yes 'With --folder: do not ask (required off a terminal)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;sync'= {
            cand --folder 'The remote folder it is published to (its subdirectories become subfolders)'
            cand -j 'Files uploaded (and deleted) at the same time'
            cand --concurrency 'Files uploaded (and deleted) at the same time'
            cand --chunk-size 'Files of at least this size go through resumable (tus) uploads, as with `upload`'
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --delete 'Also delete remote files under FOLDER that have no local counterpart'
            cand --dry-run 'Print what would be done; change nothing'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;usage'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;s3'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand credentials 'Print the key''s S3 credential, endpoint and region as shell exports (--json: the record)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;s3;credentials'= {
            cand --retries 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;s3;help'= {
            cand credentials 'Print the key''s S3 credential, endpoint and region as shell exports (--json: the record)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;s3;help;credentials'= {
        }
        &'filestore;s3;help;help'= {
        }
        &'filestore;health'= {
            cand --timeout 'How long --wait waits: 90, 60s, 1m30s, 1.5h... (at most 365d)'
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --wait 'Keep asking until the server is ok (or --timeout passes)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;completions'= {
            cand --server 'Server URL for client commands [env: FILESTORE_URL]'
            cand --api-key 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]'
            cand --profile 'Client profile in the config file [env: FILESTORE_PROFILE]'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;serve'= {
            cand --listen 'Address to listen on [env: FILESTORE_LISTEN] [default: 127.0.0.1:8080]'
            cand --base-url 'Public address of the API [env: FILESTORE_BASE_URL] [default: http://<listen>]'
            cand --cdn-url 'Address files are served from [env: FILESTORE_CDN_URL] [default: base URL]'
            cand --metrics-listen 'Serve Prometheus metrics at /metrics on this address [env: FILESTORE_METRICS_LISTEN] [default: off]'
            cand --s3-listen 'Open the S3 door on this address [env: FILESTORE_S3_LISTEN] [default: off]'
            cand --log-format 'Log lines as text or JSON [env: FILESTORE_LOG_FORMAT] [default: text]'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --migrate 'On PostgreSQL, migrate an existing older schema (without it, serve refuses to start on one and names `filestore admin migrate`; an empty database is always set up)'
            cand --json 'json'
            cand -q 'q'
            cand --quiet 'quiet'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand account 'Create, list and change accounts'
            cand key 'Create, list and revoke API keys'
            cand webhook 'Create, list and delete webhook subscriptions (file events)'
            cand plan 'List the plans every node enforces, or write this config''s plans to the database'
            cand migrate 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)'
            cand verify 'Check that every file''s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged'
            cand backup 'Back up the metadata and every file''s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)'
            cand restore 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file''s bytes'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;account'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Create an account'
            cand list 'List accounts (JSON Lines with --json)'
            cand set 'Change an account''s plan or grace period'
            cand usage 'Show an account''s usage this billing period (the record of GET /v1/usage)'
            cand delete 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;account;create'= {
            cand --name 'Unique name (default: the account''s id)'
            cand --plan 'Plan (default: server.default_plan)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;account;list'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;account;set'= {
            cand --plan 'plan'
            cand --grace-period 'In grace period, uploads are refused (403 grace_period)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;account;usage'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;account;delete'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --yes 'Do not ask (required when stdin is not a terminal)'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;account;help'= {
            cand create 'Create an account'
            cand list 'List accounts (JSON Lines with --json)'
            cand set 'Change an account''s plan or grace period'
            cand usage 'Show an account''s usage this billing period (the record of GET /v1/usage)'
            cand delete 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;account;help;create'= {
        }
        &'filestore;admin;account;help;list'= {
        }
        &'filestore;admin;account;help;set'= {
        }
        &'filestore;admin;account;help;usage'= {
        }
        &'filestore;admin;account;help;delete'= {
        }
        &'filestore;admin;account;help;help'= {
        }
        &'filestore;admin;key'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Create a key; its secret is printed once (a secret key''s with its S3 credential)'
            cand list 'List keys (never their secrets)'
            cand revoke 'Revoke a key at once'
            cand s3 'Show a secret key''s S3 credential (access key id and secret access key) again'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;key;create'= {
            cand --account 'Account id or name'
            cand --kind 'kind'
            cand --origin 'Allowed browser origin of a public key (scheme://host[:port] or https://*.example.com); repeatable'
            cand --max-size 'A public key''s largest file: bytes, or 10MB, 5MiB... (default: the plan''s)'
            cand --type 'A public key''s allowed type of the bytes: image/png or a family like image/* (which leaves out SVG); repeatable (default: any)'
            cand --folder 'The folder of a public key''s files (an upload may repeat it, not change it)'
            cand --name 'name'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;key;list'= {
            cand --account 'Only the keys of this account (id or name)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;key;revoke'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;key;s3'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;key;help'= {
            cand create 'Create a key; its secret is printed once (a secret key''s with its S3 credential)'
            cand list 'List keys (never their secrets)'
            cand revoke 'Revoke a key at once'
            cand s3 'Show a secret key''s S3 credential (access key id and secret access key) again'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;key;help;create'= {
        }
        &'filestore;admin;key;help;list'= {
        }
        &'filestore;admin;key;help;revoke'= {
        }
        &'filestore;admin;key;help;s3'= {
        }
        &'filestore;admin;key;help;help'= {
        }
        &'filestore;admin;webhook'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Subscribe a URL to an account''s file events; its signing secret is printed once'
            cand list 'List subscriptions (never their secrets)'
            cand delete 'Delete a subscription (its undelivered events are dropped)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;webhook;create'= {
            cand --account 'Account id or name'
            cand --url 'Where events are POSTed (http or https)'
            cand --event 'file.created, file.deleted, file.expired or file.updated; repeatable (default: all)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;webhook;list'= {
            cand --account 'Only the subscriptions of this account (id or name)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;webhook;delete'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;webhook;help'= {
            cand create 'Subscribe a URL to an account''s file events; its signing secret is printed once'
            cand list 'List subscriptions (never their secrets)'
            cand delete 'Delete a subscription (its undelivered events are dropped)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;webhook;help;create'= {
        }
        &'filestore;admin;webhook;help;list'= {
        }
        &'filestore;admin;webhook;help;delete'= {
        }
        &'filestore;admin;webhook;help;help'= {
        }
        &'filestore;admin;plan'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'The plans in the database (JSON Lines with --json)'
            cand apply 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;plan;list'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;plan;apply'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;plan;help'= {
            cand list 'The plans in the database (JSON Lines with --json)'
            cand apply 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;plan;help;list'= {
        }
        &'filestore;admin;plan;help;apply'= {
        }
        &'filestore;admin;plan;help;help'= {
        }
        &'filestore;admin;migrate'= {
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;verify'= {
            cand --rate 'Read blobs at most this fast: a size a second (16MiB, 16MiB/s) or bytes a second (default: as fast as the store gives them)'
            cand --repair-from 'Put back the files found missing or damaged from the backups in SRC (a directory or s3://BUCKET/PREFIX, as `admin backup` wrote them) and clear their marks; exit 0 when all were repaired'
            cand --endpoint 'The S3-compatible store of an s3:// SRC (default: AWS)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;backup'= {
            cand --endpoint 'The S3-compatible store of an s3:// DEST (default: AWS)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;restore'= {
            cand --database 'Restore into this PostgreSQL database (empty) instead of the data dir''s SQLite'
            cand --endpoint 'The S3-compatible store of an s3:// SRC (default: AWS)'
            cand --server 'server'
            cand --api-key 'api-key'
            cand --profile 'profile'
            cand --config 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]'
            cand --data-dir 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]'
            cand --json 'Machine-readable output: one JSON record, or JSON Lines for many'
            cand -q 'No progress and no informational output'
            cand --quiet 'No progress and no informational output'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'filestore;admin;help'= {
            cand account 'Create, list and change accounts'
            cand key 'Create, list and revoke API keys'
            cand webhook 'Create, list and delete webhook subscriptions (file events)'
            cand plan 'List the plans every node enforces, or write this config''s plans to the database'
            cand migrate 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)'
            cand verify 'Check that every file''s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged'
            cand backup 'Back up the metadata and every file''s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)'
            cand restore 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file''s bytes'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;admin;help;account'= {
            cand create 'Create an account'
            cand list 'List accounts (JSON Lines with --json)'
            cand set 'Change an account''s plan or grace period'
            cand usage 'Show an account''s usage this billing period (the record of GET /v1/usage)'
            cand delete 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal'
        }
        &'filestore;admin;help;account;create'= {
        }
        &'filestore;admin;help;account;list'= {
        }
        &'filestore;admin;help;account;set'= {
        }
        &'filestore;admin;help;account;usage'= {
        }
        &'filestore;admin;help;account;delete'= {
        }
        &'filestore;admin;help;key'= {
            cand create 'Create a key; its secret is printed once (a secret key''s with its S3 credential)'
            cand list 'List keys (never their secrets)'
            cand revoke 'Revoke a key at once'
            cand s3 'Show a secret key''s S3 credential (access key id and secret access key) again'
        }
        &'filestore;admin;help;key;create'= {
        }
        &'filestore;admin;help;key;list'= {
        }
        &'filestore;admin;help;key;revoke'= {
        }
        &'filestore;admin;help;key;s3'= {
        }
        &'filestore;admin;help;webhook'= {
            cand create 'Subscribe a URL to an account''s file events; its signing secret is printed once'
            cand list 'List subscriptions (never their secrets)'
            cand delete 'Delete a subscription (its undelivered events are dropped)'
        }
        &'filestore;admin;help;webhook;create'= {
        }
        &'filestore;admin;help;webhook;list'= {
        }
        &'filestore;admin;help;webhook;delete'= {
        }
        &'filestore;admin;help;plan'= {
            cand list 'The plans in the database (JSON Lines with --json)'
            cand apply 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed'
        }
        &'filestore;admin;help;plan;list'= {
        }
        &'filestore;admin;help;plan;apply'= {
        }
        &'filestore;admin;help;migrate'= {
        }
        &'filestore;admin;help;verify'= {
        }
        &'filestore;admin;help;backup'= {
        }
        &'filestore;admin;help;restore'= {
        }
        &'filestore;admin;help;help'= {
        }
        &'filestore;help'= {
            cand login 'Save a server and API key as a profile (checked against the server first)'
            cand logout 'Forget a saved profile (--profile NAME; default: the one in use)'
            cand whoami 'Show the server, account, key and plan in use'
            cand profile 'The saved client profiles'
            cand upload 'Upload files, directories (-r) or standard input (-)'
            cand list 'List files, newest first'
            cand get 'Show a file''s record (by id, or by path: the newest file there)'
            cand download 'Download a file''s content'
            cand sign 'Create a signed URL for a file (only the URL is printed)'
            cand token 'Upload tokens: URLs a browser uploads to without an API key'
            cand mv 'Rename or move a file (its id, bytes and checksum stay)'
            cand cp 'Copy a file to a new one (a new id; the same bytes, copied by the server)'
            cand delete 'Delete files permanently (by id, every file at a path, or a folder)'
            cand sync 'Publish a directory to a folder: upload what is new or changed, skip the rest'
            cand usage 'Show the account''s usage this billing period'
            cand s3 'The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with'
            cand health 'Check the server''s health (exit 0 only when ok)'
            cand completions 'Print a shell completion script'
            cand serve 'Run the server (API and CDN routes)'
            cand admin 'Operator commands: accounts and keys (on the server''s data dir)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'filestore;help;login'= {
        }
        &'filestore;help;logout'= {
        }
        &'filestore;help;whoami'= {
        }
        &'filestore;help;profile'= {
            cand list 'List the saved profiles: name and server (never a key); * marks the one in use'
        }
        &'filestore;help;profile;list'= {
        }
        &'filestore;help;upload'= {
        }
        &'filestore;help;list'= {
        }
        &'filestore;help;get'= {
        }
        &'filestore;help;download'= {
        }
        &'filestore;help;sign'= {
        }
        &'filestore;help;token'= {
            cand create 'Create an upload token; only its upload URL is printed (--json: the record)'
            cand list 'List the active upload tokens (not revoked, not expired), newest first; never a secret'
            cand revoke 'Revoke an upload token: refused at once (files already uploaded stay)'
        }
        &'filestore;help;token;create'= {
        }
        &'filestore;help;token;list'= {
        }
        &'filestore;help;token;revoke'= {
        }
        &'filestore;help;mv'= {
        }
        &'filestore;help;cp'= {
        }
        &'filestore;help;delete'= {
        }
        &'filestore;help;sync'= {
        }
        &'filestore;help;usage'= {
        }
        &'filestore;help;s3'= {
            cand credentials 'Print the key''s S3 credential, endpoint and region as shell exports (--json: the record)'
        }
        &'filestore;help;s3;credentials'= {
        }
        &'filestore;help;health'= {
        }
        &'filestore;help;completions'= {
        }
        &'filestore;help;serve'= {
        }
        &'filestore;help;admin'= {
            cand account 'Create, list and change accounts'
            cand key 'Create, list and revoke API keys'
            cand webhook 'Create, list and delete webhook subscriptions (file events)'
            cand plan 'List the plans every node enforces, or write this config''s plans to the database'
            cand migrate 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)'
            cand verify 'Check that every file''s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged'
            cand backup 'Back up the metadata and every file''s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)'
            cand restore 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file''s bytes'
        }
        &'filestore;help;admin;account'= {
            cand create 'Create an account'
            cand list 'List accounts (JSON Lines with --json)'
            cand set 'Change an account''s plan or grace period'
            cand usage 'Show an account''s usage this billing period (the record of GET /v1/usage)'
            cand delete 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal'
        }
        &'filestore;help;admin;account;create'= {
        }
        &'filestore;help;admin;account;list'= {
        }
        &'filestore;help;admin;account;set'= {
        }
        &'filestore;help;admin;account;usage'= {
        }
        &'filestore;help;admin;account;delete'= {
        }
        &'filestore;help;admin;key'= {
            cand create 'Create a key; its secret is printed once (a secret key''s with its S3 credential)'
            cand list 'List keys (never their secrets)'
            cand revoke 'Revoke a key at once'
            cand s3 'Show a secret key''s S3 credential (access key id and secret access key) again'
        }
        &'filestore;help;admin;key;create'= {
        }
        &'filestore;help;admin;key;list'= {
        }
        &'filestore;help;admin;key;revoke'= {
        }
        &'filestore;help;admin;key;s3'= {
        }
        &'filestore;help;admin;webhook'= {
            cand create 'Subscribe a URL to an account''s file events; its signing secret is printed once'
            cand list 'List subscriptions (never their secrets)'
            cand delete 'Delete a subscription (its undelivered events are dropped)'
        }
        &'filestore;help;admin;webhook;create'= {
        }
        &'filestore;help;admin;webhook;list'= {
        }
        &'filestore;help;admin;webhook;delete'= {
        }
        &'filestore;help;admin;plan'= {
            cand list 'The plans in the database (JSON Lines with --json)'
            cand apply 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed'
        }
        &'filestore;help;admin;plan;list'= {
        }
        &'filestore;help;admin;plan;apply'= {
        }
        &'filestore;help;admin;migrate'= {
        }
        &'filestore;help;admin;verify'= {
        }
        &'filestore;help;admin;backup'= {
        }
        &'filestore;help;admin;restore'= {
        }
        &'filestore;help;help'= {
        }
    ]
    $completions[$command]
}
