# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_filestore_global_optspecs
    string join \n json q/quiet server= api-key= profile= config= data-dir= h/help V/version
end

function __fish_filestore_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_filestore_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_filestore_using_subcommand
    set -l cmd (__fish_filestore_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c filestore -n "__fish_filestore_needs_command" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_needs_command" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_needs_command" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_needs_command" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_needs_command" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_needs_command" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_needs_command" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_needs_command" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "login" -d 'Save a server and API key as a profile (checked against the server first)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "logout" -d 'Forget a saved profile (--profile NAME; default: the one in use)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "whoami" -d 'Show the server, account, key and plan in use'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "profile" -d 'The saved client profiles'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "upload" -d 'Upload files, directories (-r) or standard input (-)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "list" -d 'List files, newest first'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "get" -d 'Show a file\'s record (by id, or by path: the newest file there)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "download" -d 'Download a file\'s content'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "sign" -d 'Create a signed URL for a file (only the URL is printed)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "token" -d 'Upload tokens: URLs a browser uploads to without an API key'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "mv" -d 'Rename or move a file (its id, bytes and checksum stay)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "cp" -d 'Copy a file to a new one (a new id; the same bytes, copied by the server)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "delete" -d 'Delete files permanently (by id, every file at a path, or a folder)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "sync" -d 'Publish a directory to a folder: upload what is new or changed, skip the rest'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "usage" -d 'Show the account\'s usage this billing period'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "s3" -d 'The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "health" -d 'Check the server\'s health (exit 0 only when ok)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "serve" -d 'Run the server (API and CDN routes)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "admin" -d 'Operator commands: accounts and keys (on the server\'s data dir)'
complete -c filestore -n "__fish_filestore_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand login" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand login" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand login" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand login" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand login" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand login" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand login" -l no-verify -d 'Save without checking the key against the server'
complete -c filestore -n "__fish_filestore_using_subcommand login" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand login" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand login" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand login" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand logout" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand logout" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand logout" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand logout" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand logout" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand logout" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand logout" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand logout" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand logout" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand whoami" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -f -a "list" -d 'List the saved profiles: name and server (never a key); * marks the one in use'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and not __fish_seen_subcommand_from list help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the saved profiles: name and server (never a key); * marks the one in use'
complete -c filestore -n "__fish_filestore_using_subcommand profile; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l folder -d 'Folder to store the files in (directory contents go below it)' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l name -d 'Name to store the file under (one input only; default for stdin: "stdin")' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l expires -d 'Delete the files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l content-type -d 'Content type of the files (default: guessed by the server from the name)' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l metadata -d 'Metadata of the files: KEY=VALUE, repeatable (keys a-z 0-9 _ -, at most 16 keys and 4 KiB in all); a key given twice keeps its last value' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -s j -l concurrency -d 'Files uploaded at the same time' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l chunk-size -d 'Files of at least this size go through resumable (tus) uploads, sent in pieces of this size; an interrupted upload resumes on the next run of the same command for the same file (same path, size and modification time). Bytes, or 64MiB, 500MB, 1GiB...; 0 sends every file in one request' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand upload" -s r -l recursive -d 'Upload the contents of directories, keeping their relative paths as folders'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l private -d 'Make the files private (URL null; download through signed URLs)'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l fail-fast -d 'Stop starting new uploads after the first failure'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l replace -d 'Replace the files already at each path (folder/name) as the new one is stored'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l no-clobber -d 'Refuse a file whose path (folder/name) already holds one (exit 5, error conflict)'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l dry-run -d 'Check each file\'s name and folder as the server would and say what would be uploaded; send nothing (exit 1 when something would be refused)'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand upload" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand list" -l folder -d 'Only files in this folder (exact match; with -r, its subfolders too). Without -r, its subfolders holding files come first, every one of them ("PRE sub/" lines; {"folder": "F/sub"} with --json); "" or / is the root (its own files only)' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l metadata -d 'Only files whose metadata has KEY=VALUE (exact match); repeatable, all must match' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l limit -d 'Show at most this many files [default: 50; with --json, every file, so that a script never reads a list cut short]' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l cursor -d 'Start after this cursor (from a previous listing)' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand list" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand list" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand list" -s l -l long -d 'Full ids and names, however wide the table gets'
complete -c filestore -n "__fish_filestore_using_subcommand list" -s r -l recursive -d 'With --folder: the files of its subfolders too (releases/v1.2 under releases)'
complete -c filestore -n "__fish_filestore_using_subcommand list" -l all -d 'Show every file, following the cursors (ignores --limit)'
complete -c filestore -n "__fish_filestore_using_subcommand list" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand list" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand list" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand get" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand get" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand get" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand get" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand get" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand get" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand get" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand get" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand get" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand get" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand download" -l folder -d 'Download every file of this folder and below into -o DIR, the tree recreated; a rerun resumes what was cut off and skips what is complete' -r
complete -c filestore -n "__fish_filestore_using_subcommand download" -s o -l output -d 'Where to write: a file (replaced), a directory (the file\'s name in it, never replaced without --force), or "-" for standard output [default: the file\'s name in the current directory]; with --folder, the directory to recreate the tree in' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand download" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand download" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand download" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand download" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand download" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand download" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand download" -s f -l force -d 'Replace an existing file of the same name (in the current directory or -o DIR; with --folder, a file in the tree whose bytes differ)'
complete -c filestore -n "__fish_filestore_using_subcommand download" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand download" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand download" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand download" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l expires -d 'Validity: 3600, 90s, 1m30s, 1.5h, 7d... (at most 7 days)' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l width -d 'An image variant of this width in pixels (1-4096)' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l height -d 'An image variant of this height in pixels (1-4096)' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l fit -d 'How the variant fits WxH [default: inside]' -r -f -a "cover\t''
contain\t''
inside\t''
fill\t''"
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l format -d 'The variant\'s format (auto: AVIF or WebP as the browser accepts) [default: the source\'s]' -r -f -a "auto\t''
webp\t''
avif\t''
jpeg\t''
png\t''"
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l quality -d 'The variant\'s quality (1-100) [default: 80]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand sign" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand sign" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand sign" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand sign" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "create" -d 'Create an upload token; only its upload URL is printed (--json: the record)'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "list" -d 'List the active upload tokens (not revoked, not expired), newest first; never a secret'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "revoke" -d 'Revoke an upload token: refused at once (files already uploaded stay)'
complete -c filestore -n "__fish_filestore_using_subcommand token; and not __fish_seen_subcommand_from create list revoke help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l folder -d 'Folder of the files uploaded with it' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l max-size -d 'Largest file: bytes, or 10MB, 5MiB... (default and at most: the plan\'s)' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l type -d 'Allowed type of the bytes: image/png or a family like image/* (which leaves out SVG); repeatable (default: any)' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l max-uploads -d 'How many files it may upload' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l expires -d 'How long it may be used: 900, 90s, 1m30s, 1.5h... (at most 1 day)' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l file-expires -d 'Delete its files automatically after this long: 90, 90s, 1m30s, 1.5h, 7d... (at most 365d)' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l metadata -d 'Metadata of every file it uploads: KEY=VALUE, repeatable; these keys win over the uploader\'s' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l private -d 'Make its files private (URL null; download through signed URLs)'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from create" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from revoke" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create an upload token; only its upload URL is printed (--json: the record)'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the active upload tokens (not revoked, not expired), newest first; never a secret'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "revoke" -d 'Revoke an upload token: refused at once (files already uploaded stay)'
complete -c filestore -n "__fish_filestore_using_subcommand token; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l folder -d 'The new folder ("" for the root)' -r
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l name -d 'The new name' -r
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand mv" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand mv" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand mv" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand mv" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l folder -d 'The copy\'s folder ("" for the root; default: the file\'s)' -r
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l name -d 'The copy\'s name (default: the file\'s)' -r
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l private -d 'Make the copy private (default: as the file is)'
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l public -d 'Make the copy public (default: as the file is)'
complete -c filestore -n "__fish_filestore_using_subcommand cp" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand cp" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand cp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand cp" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l folder -d 'Delete every file in this folder and below (needs --recursive)' -r
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand delete" -s r -l recursive -d 'With --folder: its subfolders too (required: a folder goes whole)'
complete -c filestore -n "__fish_filestore_using_subcommand delete" -s y -l yes -d 'With --folder: do not ask (required off a terminal)'
complete -c filestore -n "__fish_filestore_using_subcommand delete" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand delete" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand delete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand delete" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l folder -d 'The remote folder it is published to (its subdirectories become subfolders)' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -s j -l concurrency -d 'Files uploaded (and deleted) at the same time' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l chunk-size -d 'Files of at least this size go through resumable (tus) uploads, as with `upload`' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l delete -d 'Also delete remote files under FOLDER that have no local counterpart'
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l dry-run -d 'Print what would be done; change nothing'
complete -c filestore -n "__fish_filestore_using_subcommand sync" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand sync" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand sync" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand sync" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand usage" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand usage" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand usage" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand usage" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -f -a "credentials" -d 'Print the key\'s S3 credential, endpoint and region as shell exports (--json: the record)'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and not __fish_seen_subcommand_from credentials help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l retries -d 'Retries of a failed request (connection errors, 408, 429, 5xx), with exponential backoff and jitter, honouring Retry-After' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from credentials" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from help" -f -a "credentials" -d 'Print the key\'s S3 credential, endpoint and region as shell exports (--json: the record)'
complete -c filestore -n "__fish_filestore_using_subcommand s3; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand health" -l timeout -d 'How long --wait waits: 90, 60s, 1m30s, 1.5h... (at most 365d)' -r
complete -c filestore -n "__fish_filestore_using_subcommand health" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand health" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand health" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand health" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand health" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand health" -l wait -d 'Keep asking until the server is ok (or --timeout passes)'
complete -c filestore -n "__fish_filestore_using_subcommand health" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand health" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand health" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand health" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand completions" -l server -d 'Server URL for client commands [env: FILESTORE_URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand completions" -l api-key -d 'API key for client commands ("-" reads it from stdin) [env: FILESTORE_API_KEY]' -r
complete -c filestore -n "__fish_filestore_using_subcommand completions" -l profile -d 'Client profile in the config file [env: FILESTORE_PROFILE]' -r
complete -c filestore -n "__fish_filestore_using_subcommand completions" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand completions" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand completions" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand completions" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand completions" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l listen -d 'Address to listen on [env: FILESTORE_LISTEN] [default: 127.0.0.1:8080]' -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l base-url -d 'Public address of the API [env: FILESTORE_BASE_URL] [default: http://<listen>]' -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l cdn-url -d 'Address files are served from [env: FILESTORE_CDN_URL] [default: base URL]' -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l metrics-listen -d 'Serve Prometheus metrics at /metrics on this address [env: FILESTORE_METRICS_LISTEN] [default: off]' -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l s3-listen -d 'Open the S3 door on this address [env: FILESTORE_S3_LISTEN] [default: off]' -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l log-format -d 'Log lines as text or JSON [env: FILESTORE_LOG_FORMAT] [default: text]' -r -f -a "text\t'Human-readable lines (colour only on a terminal)'
json\t'One JSON object a line'"
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l migrate -d 'On PostgreSQL, migrate an existing older schema (without it, serve refuses to start on one and names `filestore admin migrate`; an empty database is always set up)'
complete -c filestore -n "__fish_filestore_using_subcommand serve" -l json
complete -c filestore -n "__fish_filestore_using_subcommand serve" -s q -l quiet
complete -c filestore -n "__fish_filestore_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand serve" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "account" -d 'Create, list and change accounts'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "key" -d 'Create, list and revoke API keys'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "webhook" -d 'Create, list and delete webhook subscriptions (file events)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "plan" -d 'List the plans every node enforces, or write this config\'s plans to the database'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "migrate" -d 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "verify" -d 'Check that every file\'s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "backup" -d 'Back up the metadata and every file\'s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "restore" -d 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file\'s bytes'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and not __fish_seen_subcommand_from account key webhook plan migrate verify backup restore help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -f -a "create" -d 'Create an account'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -f -a "list" -d 'List accounts (JSON Lines with --json)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -f -a "set" -d 'Change an account\'s plan or grace period'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -f -a "usage" -d 'Show an account\'s usage this billing period (the record of GET /v1/usage)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -f -a "delete" -d 'Delete an account with its files (their blobs are freed), keys, upload tokens and webhooks; asks first on a terminal'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from account" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -f -a "create" -d 'Create a key; its secret is printed once (a secret key\'s with its S3 credential)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -f -a "list" -d 'List keys (never their secrets)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -f -a "revoke" -d 'Revoke a key at once'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -f -a "s3" -d 'Show a secret key\'s S3 credential (access key id and secret access key) again'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from key" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -f -a "create" -d 'Subscribe a URL to an account\'s file events; its signing secret is printed once'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -f -a "list" -d 'List subscriptions (never their secrets)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -f -a "delete" -d 'Delete a subscription (its undelivered events are dropped)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from webhook" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -f -a "list" -d 'The plans in the database (JSON Lines with --json)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -f -a "apply" -d 'Write the config\'s [plans.*] to the database (every node enforces them within one collector pass); prints what changed'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from plan" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from migrate" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l rate -d 'Read blobs at most this fast: a size a second (16MiB, 16MiB/s) or bytes a second (default: as fast as the store gives them)' -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l repair-from -d 'Put back the files found missing or damaged from the backups in SRC (a directory or s3://BUCKET/PREFIX, as `admin backup` wrote them) and clear their marks; exit 0 when all were repaired' -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l endpoint -d 'The S3-compatible store of an s3:// SRC (default: AWS)' -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from verify" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l endpoint -d 'The S3-compatible store of an s3:// DEST (default: AWS)' -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from backup" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l database -d 'Restore into this PostgreSQL database (empty) instead of the data dir\'s SQLite' -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l endpoint -d 'The S3-compatible store of an s3:// SRC (default: AWS)' -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l server -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l api-key -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l profile -r
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l config -d 'Server config file (TOML) for `serve` and `admin` [env: FILESTORE_CONFIG]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l data-dir -d 'Data directory for `serve` and `admin` [env: FILESTORE_DATA_DIR]' -r -F
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -l json -d 'Machine-readable output: one JSON record, or JSON Lines for many'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -s q -l quiet -d 'No progress and no informational output'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from restore" -s V -l version -d 'Print version'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "account" -d 'Create, list and change accounts'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "key" -d 'Create, list and revoke API keys'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "webhook" -d 'Create, list and delete webhook subscriptions (file events)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "plan" -d 'List the plans every node enforces, or write this config\'s plans to the database'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "migrate" -d 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Check that every file\'s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "backup" -d 'Back up the metadata and every file\'s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "restore" -d 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file\'s bytes'
complete -c filestore -n "__fish_filestore_using_subcommand admin; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "login" -d 'Save a server and API key as a profile (checked against the server first)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "logout" -d 'Forget a saved profile (--profile NAME; default: the one in use)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "whoami" -d 'Show the server, account, key and plan in use'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "profile" -d 'The saved client profiles'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "upload" -d 'Upload files, directories (-r) or standard input (-)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "list" -d 'List files, newest first'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "get" -d 'Show a file\'s record (by id, or by path: the newest file there)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "download" -d 'Download a file\'s content'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "sign" -d 'Create a signed URL for a file (only the URL is printed)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "token" -d 'Upload tokens: URLs a browser uploads to without an API key'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "mv" -d 'Rename or move a file (its id, bytes and checksum stay)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "cp" -d 'Copy a file to a new one (a new id; the same bytes, copied by the server)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "delete" -d 'Delete files permanently (by id, every file at a path, or a folder)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "sync" -d 'Publish a directory to a folder: upload what is new or changed, skip the rest'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "usage" -d 'Show the account\'s usage this billing period'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "s3" -d 'The S3 door: the credential S3 clients (aws-cli, rclone, SDKs) sign with'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "health" -d 'Check the server\'s health (exit 0 only when ok)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "completions" -d 'Print a shell completion script'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "serve" -d 'Run the server (API and CDN routes)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "admin" -d 'Operator commands: accounts and keys (on the server\'s data dir)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and not __fish_seen_subcommand_from login logout whoami profile upload list get download sign token mv cp delete sync usage s3 health completions serve admin help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from profile" -f -a "list" -d 'List the saved profiles: name and server (never a key); * marks the one in use'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "create" -d 'Create an upload token; only its upload URL is printed (--json: the record)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "list" -d 'List the active upload tokens (not revoked, not expired), newest first; never a secret'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from token" -f -a "revoke" -d 'Revoke an upload token: refused at once (files already uploaded stay)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from s3" -f -a "credentials" -d 'Print the key\'s S3 credential, endpoint and region as shell exports (--json: the record)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "account" -d 'Create, list and change accounts'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "key" -d 'Create, list and revoke API keys'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "webhook" -d 'Create, list and delete webhook subscriptions (file events)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "plan" -d 'List the plans every node enforces, or write this config\'s plans to the database'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "migrate" -d 'Apply the schema migrations the database lacks (other commands, and serve without --migrate, refuse to move an existing PostgreSQL schema)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "verify" -d 'Check that every file\'s blob is there and holds its SHA-256; marks what is missing or damaged (never served whole) or, with --repair-from, puts it back from a backup; lists orphaned blobs; exit 1 when a file is (still) missing or damaged'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "backup" -d 'Back up the metadata and every file\'s bytes to DEST while serve runs (a second backup to the same DEST copies only new blobs)'
complete -c filestore -n "__fish_filestore_using_subcommand help; and __fish_seen_subcommand_from admin" -f -a "restore" -d 'Restore the newest complete backup of SRC into an empty data dir or (--database) an empty PostgreSQL database, whichever database it was taken on, checking every file\'s bytes'
