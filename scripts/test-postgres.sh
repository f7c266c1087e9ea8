#!/usr/bin/env bash
# Runs the test suite on PostgreSQL: starts a throwaway cluster on 127.0.0.1 in a temp dir (as the
# `postgres` user when run as root, since PostgreSQL refuses to run as root), runs `bun test` with
# HERALD_DATABASE_URL pointing at it, then stops and removes the cluster.
#
#   npm run test:pg                 # the whole suite
#   npm run test:pg -- test/posts   # some files
#
# Needs PostgreSQL's server binaries (Debian/Ubuntu: apt-get install postgresql).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z "$pg_bin" ]] && command -v initdb >/dev/null; then pg_bin=$(dirname "$(command -v initdb)"); fi
if [[ -z "$pg_bin" || ! -x "$pg_bin/initdb" ]]; then
  echo "PostgreSQL is not installed: install it (apt-get install postgresql) to run the suite on it." >&2
  echo "The SQLite suite runs without it: npm test" >&2
  exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/herald-pg.XXXXXX")
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
as_pg=()
if [[ $(id -u) -eq 0 ]]; then
  chown postgres "$dir"
  as_pg=(runuser -u postgres --)
fi

stop() {
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

# C collation: text sorts byte-wise, as on SQLite (cursors compare ids as text).
"${as_pg[@]}" "$pg_bin/initdb" -D "$dir/data" -A trust -U postgres --locale=C -E UTF8 >"$dir/initdb.log"
# Durability off: a throwaway cluster; many connections: test files run servers side by side.
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off \
      -c full_page_writes=off -c max_connections=500" >/dev/null

echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)"
export HERALD_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
node_modules/.bin/bun test --timeout 30000 "$@"
