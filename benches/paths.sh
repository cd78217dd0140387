#!/usr/bin/env bash
# The path index at scale (issue 44; docs/decisions.md, "Paths"), measured
# by hand (not in CI), on SQLite and on PostgreSQL: one account holds FILES
# files (default 1,000,000) inserted straight with SQL (an INSERT ... SELECT
# over a generated series, as uploads of non-inline files would leave
# them), then the statements the store's path methods issue
# (src/db/sqlite/paths.rs, src/db/postgres/paths.rs, copied word for word
# below) are timed at random keys:
#  - files_at: the files at one existing path (SAMPLES lookups);
#  - list_paths: a page of 1000 paths in byte order after a random existing
#    path (PAGES pages), and the same within a prefix (`dNN/`).
# Each plan is shown first (EXPLAIN QUERY PLAN / EXPLAIN ANALYZE): one
# search or range scan of files_by_path, no sort.
# The paths: `dNN/eNN/nI.bin` mostly, with the traps of byte order beside
# them — `dNN-x/eNN/…` ('-' sorts before '/'), non-ASCII `déNN/ü/…`, files
# in the root — and a second, newer file at every 1000th path.
# SQLite is timed in-process through Python's sqlite3 module (no server,
# as the store's reading connections do); PostgreSQL with pgbench over
# loopback (-M prepared, one client: the latency includes the round trip).
# Usage: benches/paths.sh [sqlite|postgres|both]   (default both)
# Env: FILES, SAMPLES (default 5000), PAGES (default 500), FILESTORE_BIN
# (default target/debug/filestore: it only creates the schema), PGBIN
# (default /usr/lib/postgresql/15/bin), PGPORT (default 55602) for the
# throwaway PostgreSQL cluster (as root it runs as the `postgres` user, like
# contrib/pg-test.sh). Needs python3, sqlite3, psql, pgbench.
set -euo pipefail
which=${1:-both}
files=${FILES:-1000000}
samples=${SAMPLES:-5000}
pages=${PAGES:-500}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${FILESTORE_BIN:-$here/target/debug/filestore}
[ -x "$bin" ] || { echo "build first: cargo build" >&2; exit 1; }
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
pgport=${PGPORT:-55602}

work=$(mktemp -d /tmp/filestore-paths.XXXXXX)
chmod 755 "$work"
pg_dir=
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi; }
cleanup() {
  [ -n "$pg_dir" ] && as_pg "$PGBIN/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1
  rm -rf "$work" ${pg_dir:+"$pg_dir"}
}
trap cleanup EXIT

columns="id, account_id, name, folder, size, content_type, private, sha256, blob_key, created_at, expires_at, inline, metadata"

# File i's folder (NULL: the root) and name, in either dialect (printf is
# SQLite's, format PostgreSQL's; both take %s of an integer).
folder_expr() { # fmt-function
  cat <<EOF
CASE WHEN i % 11 = 0 THEN NULL
     WHEN i % 7 = 0 THEN $1('d%s-x/e%s', i % 100, (i / 100) % 100)
     WHEN i % 13 = 0 THEN $1('dé%s/ü', i % 100)
     ELSE $1('d%s/e%s', i % 100, (i / 100) % 100) END
EOF
}

seed_sql() { # backend account
  if [ "$1" = sqlite ]; then
    cat <<EOF
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < $files - 1)
INSERT INTO files ($columns)
SELECT printf('f_%044x', i), '$2', 'n' || i || '.bin', $(folder_expr printf),
  10, 'application/octet-stream', 0, '00', '$2/b' || i, 1000 + i, NULL, 0, '{}' FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1000 FROM n WHERE i < $files - 1000)
INSERT INTO files ($columns)
SELECT printf('f_%044x', $files + i), '$2', 'n' || i || '.bin', $(folder_expr printf),
  10, 'application/octet-stream', 0, '00', '$2/c' || i, 5000000 + i, NULL, 0, '{}' FROM n;
COMMIT;
ANALYZE;
EOF
  else
    cat <<EOF
INSERT INTO files ($columns)
SELECT 'f_' || lpad(to_hex(i), 44, '0'), '$2', 'n' || i || '.bin', $(folder_expr format),
  10, 'application/octet-stream', false, '00', '$2/b' || i, 1000 + i, NULL, false, '{}'
FROM generate_series(0, $files - 1) i;
INSERT INTO files ($columns)
SELECT 'f_' || lpad(to_hex($files + i), 44, '0'), '$2', 'n' || i || '.bin', $(folder_expr format),
  10, 'application/octet-stream', false, '00', '$2/c' || i, 5000000 + i, NULL, false, '{}'
FROM generate_series(0, $files - 1, 1000) i;
VACUUM ANALYZE files;
EOF
  fi
}

# The statements of src/db/sqlite/paths.rs (files_at; list_paths with an
# exclusive lower bound, and with an upper bound too).
sqlite_at="SELECT $columns FROM files WHERE account_id = ?1 AND COALESCE(folder || '/', '') || name = ?2
         AND (expires_at IS NULL OR expires_at > ?3)
         ORDER BY created_at DESC, id DESC"
sqlite_page_head="SELECT $columns FROM files f WHERE f.account_id = ?1
         AND (f.expires_at IS NULL OR f.expires_at > ?2) AND COALESCE(f.folder || '/', '') || f.name > ?"
sqlite_page_tail=" AND NOT EXISTS (SELECT 1 FROM files g WHERE g.account_id = f.account_id AND COALESCE(g.folder || '/', '') || g.name = COALESCE(f.folder || '/', '') || f.name AND (g.expires_at IS NULL OR g.expires_at > ?2)
           AND (g.created_at, g.id) > (f.created_at, f.id))
         ORDER BY COALESCE(f.folder || '/', '') || f.name LIMIT ?"
sqlite_page="$sqlite_page_head$sqlite_page_tail"
sqlite_prefix_page="$sqlite_page_head AND COALESCE(f.folder || '/', '') || f.name < ?$sqlite_page_tail"

# The statements of src/db/postgres/paths.rs.
pg_path="((COALESCE(folder || '/', '') || name) COLLATE \"C\")"
pg_at="SELECT $columns FROM files WHERE account_id = \$1 AND $pg_path = \$2
                 AND (expires_at IS NULL OR expires_at > \$3)
                 ORDER BY created_at DESC, id DESC"
pg_page="SELECT DISTINCT ON ($pg_path) $columns FROM files WHERE account_id = \$1
                 AND (expires_at IS NULL OR expires_at > \$2) AND $pg_path > \$3 ORDER BY $pg_path, created_at DESC, id DESC LIMIT \$4"
pg_prefix_page="SELECT DISTINCT ON ($pg_path) $columns FROM files WHERE account_id = \$1
                 AND (expires_at IS NULL OR expires_at > \$2) AND $pg_path > \$3 AND $pg_path < \$4 ORDER BY $pg_path, created_at DESC, id DESC LIMIT \$5"

measure_sqlite() { # db account
  python3 - "$1" "$2" "$samples" "$pages" "$sqlite_at" "$sqlite_page" "$sqlite_prefix_page" <<'PY'
import random, sqlite3, sys, time
db, acc, samples, pages, at_sql, page_sql, prefix_sql = sys.argv[1:]
samples, pages = int(samples), int(pages)
c = sqlite3.connect(db)
now = 10**13
rng = random.Random(44)
keys = [r[0] for r in c.execute(
    "SELECT COALESCE(folder || '/', '') || name FROM files ORDER BY random() LIMIT ?", (samples,))]
def split(p):
    return p.rsplit("/", 1)[0] if "/" in p else None
for label, sql, args in [
    ("files_at", at_sql, (acc, keys[0], now)),
    ("list_paths", page_sql, (acc, now, keys[0], 1000)),
    ("list_paths in a prefix", prefix_sql, (acc, now, "d42/", "d420", 1000)),
]:
    print("EXPLAIN QUERY PLAN of %s:" % label)
    for row in c.execute("EXPLAIN QUERY PLAN " + sql, args):
        print("   ", row[3])
def timed(sql, args_of, n):
    ms, rows = [], 0
    for i in range(n):
        args = args_of(i)
        t = time.perf_counter()
        got = c.execute(sql, args).fetchall()
        ms.append((time.perf_counter() - t) * 1000)
        rows += len(got)
    ms.sort()
    q = lambda p: ms[min(len(ms) - 1, int(p * len(ms)))]
    return "n=%d rows/call %.1f  mean %.3f ms  p50 %.3f ms  p99 %.3f ms  max %.3f ms" % (
        n, rows / n, sum(ms) / n, q(0.5), q(0.99), ms[-1])
# Warm the page cache as a running server's would be.
timed(at_sql, lambda i: (acc, keys[i], now), min(samples, 1000))
print("files_at (one path, SQLite):", timed(at_sql, lambda i: (acc, keys[i], now), samples))
print("list_paths page of 1000 after a random path (SQLite):",
      timed(page_sql, lambda i: (acc, now, keys[i % samples], 1000), pages))
def prefix_args(i):
    d = "d%d/" % rng.randrange(100)
    return (acc, now, d, d[:-1] + "0", 1000)
print("list_paths page of 1000 in a prefix dNN/ (SQLite):", timed(prefix_sql, prefix_args, pages))
PY
}

measure_pg() { # account
  local psql="psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $pgport -U postgres postgres"
  $psql -c "CREATE TABLE bench_keys AS SELECT row_number() OVER () AS n, p AS path FROM
      (SELECT COALESCE(folder || '/', '') || name AS p FROM files ORDER BY random() LIMIT $samples) s;
      CREATE UNIQUE INDEX ON bench_keys(n); ANALYZE bench_keys;"
  local key now=10000000000000
  key=$($psql -At -c "SELECT path FROM bench_keys WHERE n = 1")
  echo "EXPLAIN ANALYZE of files_at:"
  $psql -c "PREPARE q AS $pg_at; EXPLAIN (ANALYZE, BUFFERS) EXECUTE q('$1', '$key', $now);" | sed 's/^/    /'
  echo "EXPLAIN ANALYZE of list_paths:"
  $psql -c "PREPARE q AS $pg_page; EXPLAIN (ANALYZE, BUFFERS) EXECUTE q('$1', $now, '$key', 1000);" | sed 's/^/    /'
  echo "EXPLAIN ANALYZE of list_paths in a prefix:"
  $psql -c "PREPARE q AS $pg_prefix_page; EXPLAIN (ANALYZE, BUFFERS) EXECUTE q('$1', $now, 'd42/', 'd420', 1000);" | sed 's/^/    /'
  # pgbench: -r gives each statement's mean latency; the first picks a key.
  {
    echo "\\set k random(1, $samples)"
    echo "SELECT path FROM bench_keys WHERE n = :k \\gset"
    echo "$pg_at" | tr '\n' ' ' | sed "s/\\\$1/'$1'/; s/\\\$2/:path/; s/\\\$3/$now/"; echo ";"
  } > "$work/at.sql"
  {
    echo "\\set k random(1, $samples)"
    echo "SELECT path FROM bench_keys WHERE n = :k \\gset"
    echo "$pg_page" | tr '\n' ' ' | sed "s/\\\$1/'$1'/; s/\\\$2/$now/; s/\\\$3/:path/; s/\\\$4/1000/"; echo ";"
  } > "$work/page.sql"
  {
    echo "\\set d random(0, 99)"
    echo "$pg_prefix_page" | tr '\n' ' ' | sed "s/\\\$1/'$1'/; s/\\\$2/$now/; s/\\\$3/('d' || :d || '\\/')/; s/\\\$4/('d' || :d || '0')/; s/\\\$5/1000/"; echo ";"
  } > "$work/prefix.sql"
  local b="pgbench -n -M prepared -c 1 -r -h 127.0.0.1 -p $pgport -U postgres postgres"
  $b -t 1000 -f "$work/at.sql" >/dev/null
  echo "files_at (one path, PostgreSQL), per-statement latency:"
  $b -t "$samples" -f "$work/at.sql" | sed -n '/statement latencies/,$p' | sed 's/^/    /'
  echo "list_paths page of 1000 after a random path (PostgreSQL):"
  $b -t "$pages" -f "$work/page.sql" | sed -n '/statement latencies/,$p' | sed 's/^/    /'
  echo "list_paths page of 1000 in a prefix dNN/ (PostgreSQL):"
  $b -t "$pages" -f "$work/prefix.sql" | sed -n '/statement latencies/,$p' | sed 's/^/    /'
}

measure() { # backend
  local backend=$1 data="$work/data-$1"
  mkdir -m 700 -p "$data"
  if [ "$backend" = postgres ]; then
    pg_dir=$(mktemp -d /tmp/filestore-paths-pg.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
    as_pg "$PGBIN/initdb -D $pg_dir/data -A trust -U postgres" >/dev/null
    as_pg "$PGBIN/pg_ctl -D $pg_dir/data -l $pg_dir/log -w -o '-p $pgport -k /tmp -c fsync=off -c shared_buffers=512MB' start" >/dev/null
    export FILESTORE_DATABASE_URL="postgres://postgres@127.0.0.1:$pgport/postgres"
    sql() { psql -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pgport" -U postgres postgres; }
  else
    unset FILESTORE_DATABASE_URL
    sql() { sqlite3 "$data/filestore.db"; }
  fi
  local acc t0
  acc=$("$bin" admin account create --name paths --data-dir "$data" --json |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
  t0=$(date +%s)
  seed_sql "$backend" "$acc" | sql
  echo "== $backend: seeded $files files (+ $(( (files + 999) / 1000 )) second files at a path) in $(( $(date +%s) - t0 )) s"
  if [ "$backend" = postgres ]; then
    measure_pg "$acc"
    as_pg "$PGBIN/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1
    rm -rf "$pg_dir"; pg_dir=
  else
    measure_sqlite "$data/filestore.db" "$acc"
  fi
}

case $which in
  sqlite|postgres) measure "$which" ;;
  both) measure sqlite; measure postgres ;;
  *) echo "usage: benches/paths.sh [sqlite|postgres|both]" >&2; exit 2 ;;
esac
