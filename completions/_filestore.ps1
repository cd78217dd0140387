
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'filestore' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'filestore'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'filestore' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('login', 'login', [CompletionResultType]::ParameterValue, 'Save a server and API key as a profile (checked against the server first)')
            [CompletionResult]::new('logout', 'logout', [CompletionResultType]::ParameterValue, 'Forget a saved profile (--profile NAME; default: the one in use)')
            [CompletionResult]::new('whoami', 'whoami', [CompletionResultType]::ParameterValue, 'Show the server, account, key and plan in use')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'The saved client profiles')
            [CompletionResult]::new('upload', 'upload', [CompletionResultType]::ParameterValue, 'Upload files, directories (-r) or standard input (-)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List files, newest first')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'Show a file''s record (by id, or by path: the newest file there)')
            [CompletionResult]::new('download', 'download', [CompletionResultType]::ParameterValue, 'Download a file''s content')
            [CompletionResult]::new('sign', 'sign', [CompletionResultType]::ParameterValue, 'Create a signed URL for a file (only the URL is printed)')
            [CompletionResult]::new('token', 'token', [CompletionResultType]::ParameterValue, 'Upload tokens: URLs a browser uploads to without an API key')
            [CompletionResult]::new('mv', 'mv', [CompletionResultType]::ParameterValue, 'Rename or move a file (its id, bytes and checksum stay)')
            [CompletionResult]::new('cp', 'cp', [CompletionResultType]::ParameterValue, 'Copy a file to a new one (a new id; the same bytes, copied by the server)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete files permanently (by id, every file at a path, or a folder)')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Publish a directory to a folder: upload what is new or changed, skip the rest')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Show the account''s usage this billing period')
            [CompletionResult]::new('s3', 's3', [CompletionResultType]::ParameterValue, 'The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with')
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'Check the server''s health (exit 0 only when ok)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run the server (API and CDN routes)')
            [CompletionResult]::new('admin', 'admin', [CompletionResultType]::ParameterValue, 'Operator commands: accounts and keys (on the server''s data dir)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;login' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--no-verify', '--no-verify', [CompletionResultType]::ParameterName, 'Save without checking the key against the server')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;logout' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;whoami' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;profile' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the saved profiles: name and server (never a key); * marks the one in use')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;profile;list' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;profile;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the saved profiles: name and server (never a key); * marks the one in use')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;profile;help;list' {
            break
        }
        'filestore;profile;help;help' {
            break
        }
        'filestore;upload' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'Folder to store the files in (directory contents go below it)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Name to store the file under (one input only; default for stdin: "stdin")')
            [CompletionResult]::new('--expires', '--expires', [CompletionResultType]::ParameterName, 'Delete the files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)')
            [CompletionResult]::new('--content-type', '--content-type', [CompletionResultType]::ParameterName, 'Content type of the files (default: guessed by the server from the name)')
            [CompletionResult]::new('--metadata', '--metadata', [CompletionResultType]::ParameterName, 'Metadata of the files: KEY=VALUE, repeatable (keys a-z 0-9 _ -, at most 16 keys and 4 KiB in all); a key given twice keeps its last value')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Files uploaded at the same time')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Files uploaded at the same time')
            [CompletionResult]::new('--chunk-size', '--chunk-size', [CompletionResultType]::ParameterName, 'Files of at least this size go through resumable (tus) uploads, sent in pieces of this size; an interrupted upload resumes on the next run of the same command for the same file (same path, size and modification time). Bytes, or 64MiB, 500MB, 1GiB...; 0 sends every file in one request')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'Upload the contents of directories, keeping their relative paths as folders')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Upload the contents of directories, keeping their relative paths as folders')
            [CompletionResult]::new('--private', '--private', [CompletionResultType]::ParameterName, 'Make the files private (URL null; download through signed URLs)')
            [CompletionResult]::new('--fail-fast', '--fail-fast', [CompletionResultType]::ParameterName, 'Stop starting new uploads after the first failure')
            [CompletionResult]::new('--replace', '--replace', [CompletionResultType]::ParameterName, 'Replace the files already at each path (folder/name) as the new one is stored')
            [CompletionResult]::new('--no-clobber', '--no-clobber', [CompletionResultType]::ParameterName, 'Refuse a file whose path (folder/name) already holds one (exit 5, error conflict)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Check each file''s name and folder as the server would and say what would be uploaded; send nothing (exit 1 when something would be refused)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;list' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'Only files in this folder (exact match; with -r, its subfolders too). Without -r, its subfolders holding files come first, every one of them ("PRE sub/" lines; {"folder": "F/sub"} with --json); "" or / is the root (its own files only)')
            [CompletionResult]::new('--metadata', '--metadata', [CompletionResultType]::ParameterName, 'Only files whose metadata has KEY=VALUE (exact match); repeatable, all must match')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most this many files [default: 50; with --json, every file, so that a script never reads a list cut short]')
            [CompletionResult]::new('--cursor', '--cursor', [CompletionResultType]::ParameterName, 'Start after this cursor (from a previous listing)')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Full ids and names, however wide the table gets')
            [CompletionResult]::new('--long', '--long', [CompletionResultType]::ParameterName, 'Full ids and names, however wide the table gets')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'With --folder: the files of its subfolders too (releases/v1.2 under releases)')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'With --folder: the files of its subfolders too (releases/v1.2 under releases)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every file, following the cursors (ignores --limit)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;get' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;download' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'Download every file of this folder and below into -o DIR, the tree recreated; a rerun resumes what was cut off and skips what is complete')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Where to write: a file (replaced), a directory (the file''s name in it, never replaced without --force), or "-" for standard output [default: the file''s name in the current directory]; with --folder, the directory to recreate the tree in')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Where to write: a file (replaced), a directory (the file''s name in it, never replaced without --force), or "-" for standard output [default: the file''s name in the current directory]; with --folder, the directory to recreate the tree in')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Replace an existing file of the same name (in the current directory or -o DIR; with --folder, a file in the tree whose bytes differ)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Replace an existing file of the same name (in the current directory or -o DIR; with --folder, a file in the tree whose bytes differ)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;sign' {
            [CompletionResult]::new('--expires', '--expires', [CompletionResultType]::ParameterName, 'Validity: 3600, 90s, 1m30s, 1.5h, 7d... (at most 7 days)')
            [CompletionResult]::new('--width', '--width', [CompletionResultType]::ParameterName, 'An image variant of this width in pixels (1-4096)')
            [CompletionResult]::new('--height', '--height', [CompletionResultType]::ParameterName, 'An image variant of this height in pixels (1-4096)')
            [CompletionResult]::new('--fit', '--fit', [CompletionResultType]::ParameterName, 'How the variant fits WxH [default: inside]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The variant''s format (auto: AVIF or WebP as the browser accepts) [default: the source''s]')
            [CompletionResult]::new('--quality', '--quality', [CompletionResultType]::ParameterName, 'The variant''s quality (1-100) [default: 80]')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;token' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an upload token; only its upload URL is printed (--json: the record)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the active upload tokens (not revoked, not expired), newest first; never a secret')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke an upload token: refused at once (files already uploaded stay)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;token;create' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'Folder of the files uploaded with it')
            [CompletionResult]::new('--max-size', '--max-size', [CompletionResultType]::ParameterName, 'Largest file: bytes, or 10MB, 5MiB... (default and at most: the plan''s)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'Allowed type of the bytes: image/png or a family like image/* (which leaves out SVG); repeatable (default: any)')
            [CompletionResult]::new('--max-uploads', '--max-uploads', [CompletionResultType]::ParameterName, 'How many files it may upload')
            [CompletionResult]::new('--expires', '--expires', [CompletionResultType]::ParameterName, 'How long it may be used: 900, 90s, 1m30s, 1.5h... (at most 1 day)')
            [CompletionResult]::new('--file-expires', '--file-expires', [CompletionResultType]::ParameterName, 'Delete its files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)')
            [CompletionResult]::new('--metadata', '--metadata', [CompletionResultType]::ParameterName, 'Metadata of every file it uploads: KEY=VALUE, repeatable; these keys win over the uploader''s')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--private', '--private', [CompletionResultType]::ParameterName, 'Make its files private (URL null; download through signed URLs)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;token;list' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;token;revoke' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;token;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an upload token; only its upload URL is printed (--json: the record)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the active upload tokens (not revoked, not expired), newest first; never a secret')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke an upload token: refused at once (files already uploaded stay)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;token;help;create' {
            break
        }
        'filestore;token;help;list' {
            break
        }
        'filestore;token;help;revoke' {
            break
        }
        'filestore;token;help;help' {
            break
        }
        'filestore;mv' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'The new folder ("" for the root)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The new name')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;cp' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'The copy''s folder ("" for the root; default: the file''s)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The copy''s name (default: the file''s)')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--private', '--private', [CompletionResultType]::ParameterName, 'Make the copy private (default: as the file is)')
            [CompletionResult]::new('--public', '--public', [CompletionResultType]::ParameterName, 'Make the copy public (default: as the file is)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;delete' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'Delete every file in this folder and below (needs --recursive)')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('-r', '-r', [CompletionResultType]::ParameterName, 'With --folder: its subfolders too (required: a folder goes whole)')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'With --folder: its subfolders too (required: a folder goes whole)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'With --folder: do not ask (required off a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'With --folder: do not ask (required off a terminal)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;sync' {
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'The remote folder it is published to (its subdirectories become subfolders)')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Files uploaded (and deleted) at the same time')
            [CompletionResult]::new('--concurrency', '--concurrency', [CompletionResultType]::ParameterName, 'Files uploaded (and deleted) at the same time')
            [CompletionResult]::new('--chunk-size', '--chunk-size', [CompletionResultType]::ParameterName, 'Files of at least this size go through resumable (tus) uploads, as with `upload`')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--delete', '--delete', [CompletionResultType]::ParameterName, 'Also delete remote files under FOLDER that have no local counterpart')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would be done; change nothing')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;usage' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;s3' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('credentials', 'credentials', [CompletionResultType]::ParameterValue, 'Print the key''s S3 credential, endpoint and region as shell exports (--json: the record)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;s3;credentials' {
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;s3;help' {
            [CompletionResult]::new('credentials', 'credentials', [CompletionResultType]::ParameterValue, 'Print the key''s S3 credential, endpoint and region as shell exports (--json: the record)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;s3;help;credentials' {
            break
        }
        'filestore;s3;help;help' {
            break
        }
        'filestore;health' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long --wait waits: 90, 60s, 1m30s, 1.5h... (at most 365d)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Keep asking until the server is ok (or --timeout passes)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;completions' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'Server URL for client commands [env: FILESTORE_URL]')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Client profile in the config file [env: FILESTORE_PROFILE]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;serve' {
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on [env: FILESTORE_LISTEN] [default: 127.0.0.1:8080]')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'Public address of the API [env: FILESTORE_BASE_URL] [default: http://<listen>]')
            [CompletionResult]::new('--cdn-url', '--cdn-url', [CompletionResultType]::ParameterName, 'Address files are served from [env: FILESTORE_CDN_URL] [default: base URL]')
            [CompletionResult]::new('--metrics-listen', '--metrics-listen', [CompletionResultType]::ParameterName, 'Serve Prometheus metrics at /metrics on this address [env: FILESTORE_METRICS_LISTEN] [default: off]')
            [CompletionResult]::new('--s3-listen', '--s3-listen', [CompletionResultType]::ParameterName, 'Open the S3 door on this address [env: FILESTORE_S3_LISTEN] [default: off]')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'Log lines as text or JSON [env: FILESTORE_LOG_FORMAT] [default: text]')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--migrate', '--migrate', [CompletionResultType]::ParameterName, 'On PostgreSQL, migrate an existing older schema (without it, serve refuses to start on one and names `filestore admin migrate`; an empty database is always set up)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'q')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'quiet')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('account', 'account', [CompletionResultType]::ParameterValue, 'Create, list and change accounts')
            [CompletionResult]::new('key', 'key', [CompletionResultType]::ParameterValue, 'Create, list and revoke API keys')
            [CompletionResult]::new('webhook', 'webhook', [CompletionResultType]::ParameterValue, 'Create, list and delete webhook subscriptions (file events)')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'List the plans every node enforces, or write this config''s plans to the database')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check that every file''s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Back up the metadata and every file''s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file''s bytes')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;account' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an account')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List accounts (JSON Lines with --json)')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Change an account''s plan or grace period')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Show an account''s usage this billing period (the record of GET /v1/usage)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;account;create' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'Unique name (default: the account''s id)')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'Plan (default: server.default_plan)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;account;list' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;account;set' {
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'plan')
            [CompletionResult]::new('--grace-period', '--grace-period', [CompletionResultType]::ParameterName, 'In grace period, uploads are refused (403 grace_period)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;account;usage' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;account;delete' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask (required when stdin is not a terminal)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;account;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an account')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List accounts (JSON Lines with --json)')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Change an account''s plan or grace period')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Show an account''s usage this billing period (the record of GET /v1/usage)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;account;help;create' {
            break
        }
        'filestore;admin;account;help;list' {
            break
        }
        'filestore;admin;account;help;set' {
            break
        }
        'filestore;admin;account;help;usage' {
            break
        }
        'filestore;admin;account;help;delete' {
            break
        }
        'filestore;admin;account;help;help' {
            break
        }
        'filestore;admin;key' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a key; its secret is printed once (a secret key''s with its S3 credential)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List keys (never their secrets)')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke a key at once')
            [CompletionResult]::new('s3', 's3', [CompletionResultType]::ParameterValue, 'Show a secret key''s S3 credential (access key id and secret access key) again')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;key;create' {
            [CompletionResult]::new('--account', '--account', [CompletionResultType]::ParameterName, 'Account id or name')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'kind')
            [CompletionResult]::new('--origin', '--origin', [CompletionResultType]::ParameterName, 'Allowed browser origin of a public key (scheme://host[:port] or https://*.example.com); repeatable')
            [CompletionResult]::new('--max-size', '--max-size', [CompletionResultType]::ParameterName, 'A public key''s largest file: bytes, or 10MB, 5MiB... (default: the plan''s)')
            [CompletionResult]::new('--type', '--type', [CompletionResultType]::ParameterName, 'A public key''s allowed type of the bytes: image/png or a family like image/* (which leaves out SVG); repeatable (default: any)')
            [CompletionResult]::new('--folder', '--folder', [CompletionResultType]::ParameterName, 'The folder of a public key''s files (an upload may repeat it, not change it)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'name')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;key;list' {
            [CompletionResult]::new('--account', '--account', [CompletionResultType]::ParameterName, 'Only the keys of this account (id or name)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;key;revoke' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;key;s3' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;key;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a key; its secret is printed once (a secret key''s with its S3 credential)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List keys (never their secrets)')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke a key at once')
            [CompletionResult]::new('s3', 's3', [CompletionResultType]::ParameterValue, 'Show a secret key''s S3 credential (access key id and secret access key) again')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;key;help;create' {
            break
        }
        'filestore;admin;key;help;list' {
            break
        }
        'filestore;admin;key;help;revoke' {
            break
        }
        'filestore;admin;key;help;s3' {
            break
        }
        'filestore;admin;key;help;help' {
            break
        }
        'filestore;admin;webhook' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Subscribe a URL to an account''s file events; its signing secret is printed once')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List subscriptions (never their secrets)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete a subscription (its undelivered events are dropped)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;webhook;create' {
            [CompletionResult]::new('--account', '--account', [CompletionResultType]::ParameterName, 'Account id or name')
            [CompletionResult]::new('--url', '--url', [CompletionResultType]::ParameterName, 'Where events are POSTed (http or https)')
            [CompletionResult]::new('--event', '--event', [CompletionResultType]::ParameterName, 'file.created, file.deleted, file.expired or file.updated; repeatable (default: all)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;webhook;list' {
            [CompletionResult]::new('--account', '--account', [CompletionResultType]::ParameterName, 'Only the subscriptions of this account (id or name)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;webhook;delete' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;webhook;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Subscribe a URL to an account''s file events; its signing secret is printed once')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List subscriptions (never their secrets)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete a subscription (its undelivered events are dropped)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;webhook;help;create' {
            break
        }
        'filestore;admin;webhook;help;list' {
            break
        }
        'filestore;admin;webhook;help;delete' {
            break
        }
        'filestore;admin;webhook;help;help' {
            break
        }
        'filestore;admin;plan' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The plans in the database (JSON Lines with --json)')
            [CompletionResult]::new('apply', 'apply', [CompletionResultType]::ParameterValue, 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;plan;list' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;plan;apply' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;plan;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The plans in the database (JSON Lines with --json)')
            [CompletionResult]::new('apply', 'apply', [CompletionResultType]::ParameterValue, 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;plan;help;list' {
            break
        }
        'filestore;admin;plan;help;apply' {
            break
        }
        'filestore;admin;plan;help;help' {
            break
        }
        'filestore;admin;migrate' {
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;verify' {
            [CompletionResult]::new('--rate', '--rate', [CompletionResultType]::ParameterName, 'Read blobs at most this fast: a size a second (16MiB, 16MiB/s) or bytes a second (default: as fast as the store gives them)')
            [CompletionResult]::new('--repair-from', '--repair-from', [CompletionResultType]::ParameterName, 'Put back the files found missing or damaged from the backups in SRC (a directory or s3://BUCKET/PREFIX, as `admin backup` wrote them) and clear their marks; exit 0 when all were repaired')
            [CompletionResult]::new('--endpoint', '--endpoint', [CompletionResultType]::ParameterName, 'The S3-compatible store of an s3:// SRC (default: AWS)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;backup' {
            [CompletionResult]::new('--endpoint', '--endpoint', [CompletionResultType]::ParameterName, 'The S3-compatible store of an s3:// DEST (default: AWS)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;restore' {
            [CompletionResult]::new('--database', '--database', [CompletionResultType]::ParameterName, 'Restore into this PostgreSQL database (empty) instead of the data dir''s SQLite')
            [CompletionResult]::new('--endpoint', '--endpoint', [CompletionResultType]::ParameterName, 'The S3-compatible store of an s3:// SRC (default: AWS)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'server')
            [CompletionResult]::new('--api-key', '--api-key', [CompletionResultType]::ParameterName, 'api-key')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'profile')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Machine-readable output: one JSON record, or JSON Lines for many')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress and no informational output')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'filestore;admin;help' {
            [CompletionResult]::new('account', 'account', [CompletionResultType]::ParameterValue, 'Create, list and change accounts')
            [CompletionResult]::new('key', 'key', [CompletionResultType]::ParameterValue, 'Create, list and revoke API keys')
            [CompletionResult]::new('webhook', 'webhook', [CompletionResultType]::ParameterValue, 'Create, list and delete webhook subscriptions (file events)')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'List the plans every node enforces, or write this config''s plans to the database')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check that every file''s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Back up the metadata and every file''s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file''s bytes')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;admin;help;account' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an account')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List accounts (JSON Lines with --json)')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Change an account''s plan or grace period')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Show an account''s usage this billing period (the record of GET /v1/usage)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal')
            break
        }
        'filestore;admin;help;account;create' {
            break
        }
        'filestore;admin;help;account;list' {
            break
        }
        'filestore;admin;help;account;set' {
            break
        }
        'filestore;admin;help;account;usage' {
            break
        }
        'filestore;admin;help;account;delete' {
            break
        }
        'filestore;admin;help;key' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a key; its secret is printed once (a secret key''s with its S3 credential)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List keys (never their secrets)')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke a key at once')
            [CompletionResult]::new('s3', 's3', [CompletionResultType]::ParameterValue, 'Show a secret key''s S3 credential (access key id and secret access key) again')
            break
        }
        'filestore;admin;help;key;create' {
            break
        }
        'filestore;admin;help;key;list' {
            break
        }
        'filestore;admin;help;key;revoke' {
            break
        }
        'filestore;admin;help;key;s3' {
            break
        }
        'filestore;admin;help;webhook' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Subscribe a URL to an account''s file events; its signing secret is printed once')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List subscriptions (never their secrets)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete a subscription (its undelivered events are dropped)')
            break
        }
        'filestore;admin;help;webhook;create' {
            break
        }
        'filestore;admin;help;webhook;list' {
            break
        }
        'filestore;admin;help;webhook;delete' {
            break
        }
        'filestore;admin;help;plan' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The plans in the database (JSON Lines with --json)')
            [CompletionResult]::new('apply', 'apply', [CompletionResultType]::ParameterValue, 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed')
            break
        }
        'filestore;admin;help;plan;list' {
            break
        }
        'filestore;admin;help;plan;apply' {
            break
        }
        'filestore;admin;help;migrate' {
            break
        }
        'filestore;admin;help;verify' {
            break
        }
        'filestore;admin;help;backup' {
            break
        }
        'filestore;admin;help;restore' {
            break
        }
        'filestore;admin;help;help' {
            break
        }
        'filestore;help' {
            [CompletionResult]::new('login', 'login', [CompletionResultType]::ParameterValue, 'Save a server and API key as a profile (checked against the server first)')
            [CompletionResult]::new('logout', 'logout', [CompletionResultType]::ParameterValue, 'Forget a saved profile (--profile NAME; default: the one in use)')
            [CompletionResult]::new('whoami', 'whoami', [CompletionResultType]::ParameterValue, 'Show the server, account, key and plan in use')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'The saved client profiles')
            [CompletionResult]::new('upload', 'upload', [CompletionResultType]::ParameterValue, 'Upload files, directories (-r) or standard input (-)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List files, newest first')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'Show a file''s record (by id, or by path: the newest file there)')
            [CompletionResult]::new('download', 'download', [CompletionResultType]::ParameterValue, 'Download a file''s content')
            [CompletionResult]::new('sign', 'sign', [CompletionResultType]::ParameterValue, 'Create a signed URL for a file (only the URL is printed)')
            [CompletionResult]::new('token', 'token', [CompletionResultType]::ParameterValue, 'Upload tokens: URLs a browser uploads to without an API key')
            [CompletionResult]::new('mv', 'mv', [CompletionResultType]::ParameterValue, 'Rename or move a file (its id, bytes and checksum stay)')
            [CompletionResult]::new('cp', 'cp', [CompletionResultType]::ParameterValue, 'Copy a file to a new one (a new id; the same bytes, copied by the server)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete files permanently (by id, every file at a path, or a folder)')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Publish a directory to a folder: upload what is new or changed, skip the rest')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Show the account''s usage this billing period')
            [CompletionResult]::new('s3', 's3', [CompletionResultType]::ParameterValue, 'The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with')
            [CompletionResult]::new('health', 'health', [CompletionResultType]::ParameterValue, 'Check the server''s health (exit 0 only when ok)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run the server (API and CDN routes)')
            [CompletionResult]::new('admin', 'admin', [CompletionResultType]::ParameterValue, 'Operator commands: accounts and keys (on the server''s data dir)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'filestore;help;login' {
            break
        }
        'filestore;help;logout' {
            break
        }
        'filestore;help;whoami' {
            break
        }
        'filestore;help;profile' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the saved profiles: name and server (never a key); * marks the one in use')
            break
        }
        'filestore;help;profile;list' {
            break
        }
        'filestore;help;upload' {
            break
        }
        'filestore;help;list' {
            break
        }
        'filestore;help;get' {
            break
        }
        'filestore;help;download' {
            break
        }
        'filestore;help;sign' {
            break
        }
        'filestore;help;token' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an upload token; only its upload URL is printed (--json: the record)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the active upload tokens (not revoked, not expired), newest first; never a secret')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke an upload token: refused at once (files already uploaded stay)')
            break
        }
        'filestore;help;token;create' {
            break
        }
        'filestore;help;token;list' {
            break
        }
        'filestore;help;token;revoke' {
            break
        }
        'filestore;help;mv' {
            break
        }
        'filestore;help;cp' {
            break
        }
        'filestore;help;delete' {
            break
        }
        'filestore;help;sync' {
            break
        }
        'filestore;help;usage' {
            break
        }
        'filestore;help;s3' {
            [CompletionResult]::new('credentials', 'credentials', [CompletionResultType]::ParameterValue, 'Print the key''s S3 credential, endpoint and region as shell exports (--json: the record)')
            break
        }
        'filestore;help;s3;credentials' {
            break
        }
        'filestore;help;health' {
            break
        }
        'filestore;help;completions' {
            break
        }
        'filestore;help;serve' {
            break
        }
        'filestore;help;admin' {
            [CompletionResult]::new('account', 'account', [CompletionResultType]::ParameterValue, 'Create, list and change accounts')
            [CompletionResult]::new('key', 'key', [CompletionResultType]::ParameterValue, 'Create, list and revoke API keys')
            [CompletionResult]::new('webhook', 'webhook', [CompletionResultType]::ParameterValue, 'Create, list and delete webhook subscriptions (file events)')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'List the plans every node enforces, or write this config''s plans to the database')
            [CompletionResult]::new('migrate', 'migrate', [CompletionResultType]::ParameterValue, 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check that every file''s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Back up the metadata and every file''s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file''s bytes')
            break
        }
        'filestore;help;admin;account' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create an account')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List accounts (JSON Lines with --json)')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Change an account''s plan or grace period')
            [CompletionResult]::new('usage', 'usage', [CompletionResultType]::ParameterValue, 'Show an account''s usage this billing period (the record of GET /v1/usage)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal')
            break
        }
        'filestore;help;admin;account;create' {
            break
        }
        'filestore;help;admin;account;list' {
            break
        }
        'filestore;help;admin;account;set' {
            break
        }
        'filestore;help;admin;account;usage' {
            break
        }
        'filestore;help;admin;account;delete' {
            break
        }
        'filestore;help;admin;key' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a key; its secret is printed once (a secret key''s with its S3 credential)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List keys (never their secrets)')
            [CompletionResult]::new('revoke', 'revoke', [CompletionResultType]::ParameterValue, 'Revoke a key at once')
            [CompletionResult]::new('s3', 's3', [CompletionResultType]::ParameterValue, 'Show a secret key''s S3 credential (access key id and secret access key) again')
            break
        }
        'filestore;help;admin;key;create' {
            break
        }
        'filestore;help;admin;key;list' {
            break
        }
        'filestore;help;admin;key;revoke' {
            break
        }
        'filestore;help;admin;key;s3' {
            break
        }
        'filestore;help;admin;webhook' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Subscribe a URL to an account''s file events; its signing secret is printed once')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List subscriptions (never their secrets)')
            [CompletionResult]::new('delete', 'delete', [CompletionResultType]::ParameterValue, 'Delete a subscription (its undelivered events are dropped)')
            break
        }
        'filestore;help;admin;webhook;create' {
            break
        }
        'filestore;help;admin;webhook;list' {
            break
        }
        'filestore;help;admin;webhook;delete' {
            break
        }
        'filestore;help;admin;plan' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'The plans in the database (JSON Lines with --json)')
            [CompletionResult]::new('apply', 'apply', [CompletionResultType]::ParameterValue, 'Write the config''s [plans.*] to the database (every node enforces them within one collector pass); prints what changed')
            break
        }
        'filestore;help;admin;plan;list' {
            break
        }
        'filestore;help;admin;plan;apply' {
            break
        }
        'filestore;help;admin;migrate' {
            break
        }
        'filestore;help;admin;verify' {
            break
        }
        'filestore;help;admin;backup' {
            break
        }
        'filestore;help;admin;restore' {
            break
        }
        'filestore;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
