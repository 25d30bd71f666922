#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it: formatting, vet, staticcheck,
# every test with the race detector, and a short fuzzing run.
set -euo pipefail
cd "$(dirname "$0")"

echo "== postgresql"
# The PostgreSQL tests (postgres/, server/ replicas) need a server at
# 127.0.0.1:5432 with trust authentication and a database named test:
# start it when it is stopped, install it when it is missing. Idempotent.
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if ! ls -d /etc/postgresql/*/main >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    conf=$(ls -d /etc/postgresql/*/main | sort -V | tail -1)
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$conf/pg_hba.conf"
    echo "listen_addresses = '127.0.0.1'" >"$conf/conf.d/90-ci.conf"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start || true
  for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  pg_isready -h 127.0.0.1 -p 5432
fi
psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 ||
  psql -h 127.0.0.1 -U postgres -d postgres -qc "CREATE DATABASE test"
# Set, so the PostgreSQL tests fail rather than skip when it is unreachable.
export HITL_TEST_POSTGRES="${HITL_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"

echo "== browser (web inbox tests)"
# The ui/ tests drive Debian's Chromium headless and inject axe-core (from
# the npm registry, into the git-ignored ui/testdata/node_modules). Both are
# installed only when missing.
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
AXE_VERSION=4.14.1
if ! grep -qs "\"version\": \"$AXE_VERSION\"" ui/testdata/node_modules/axe-core/package.json; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix ui/testdata "axe-core@$AXE_VERSION" >/dev/null
fi
# The <hitl-prompt> tests (ui/embed_test.go) embed it in chat pages
# written in React, Svelte and Vue, compiled with esbuild: pinned, from
# the npm registry, into the git-ignored ui/testdata/embed/node_modules.
EMBED_PACKAGES="react@19.3.1 react-dom@19.3.1 svelte@5.57.3 vue@3.5.45 esbuild@0.28.2"
for pkg in $EMBED_PACKAGES; do
  name=${pkg%@*} version=${pkg##*@}
  if ! grep -qs "\"version\": \"$version\"" "ui/testdata/embed/node_modules/$name/package.json"; then
    npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
      --prefix ui/testdata/embed $EMBED_PACKAGES >/dev/null
    break
  fi
done

echo "== mcp gate (mcpgate, cmd/hitl)"
# hitl gate's tests drive real MCP servers from the npm registry with the
# official TypeScript SDK's client, all pinned, in the git-ignored
# mcpgate/testdata/node_modules; installed only when one is missing. The
# MCP server's task tests use the same client, and the Tasks extension
# package over the SDK 2 client.
MCP_SDK_VERSION=1.32.2
MCP_SERVERS_VERSION=2026.8.31
MCP_CLIENT2_VERSION=2.4.0
MCP_EXT_TASKS_VERSION=0.2.2
if ! grep -qs "\"version\": \"$MCP_SDK_VERSION\"" mcpgate/testdata/node_modules/@modelcontextprotocol/sdk/package.json ||
  ! grep -qs "\"version\": \"$MCP_SERVERS_VERSION\"" mcpgate/testdata/node_modules/@modelcontextprotocol/server-filesystem/package.json ||
  ! grep -qs "\"version\": \"$MCP_SERVERS_VERSION\"" mcpgate/testdata/node_modules/@modelcontextprotocol/server-everything/package.json ||
  ! grep -qs "\"version\": \"$MCP_CLIENT2_VERSION\"" mcpgate/testdata/node_modules/@modelcontextprotocol/client/package.json ||
  ! grep -qs "\"version\": \"$MCP_EXT_TASKS_VERSION\"" mcpgate/testdata/node_modules/@modelcontextprotocol/ext-tasks/package.json; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix mcpgate/testdata \
    "@modelcontextprotocol/sdk@$MCP_SDK_VERSION" \
    "@modelcontextprotocol/server-filesystem@$MCP_SERVERS_VERSION" \
    "@modelcontextprotocol/server-everything@$MCP_SERVERS_VERSION" \
    "@modelcontextprotocol/client@$MCP_CLIENT2_VERSION" \
    "@modelcontextprotocol/ext-tasks@$MCP_EXT_TASKS_VERSION" >/dev/null
fi
# Set, so the gate's tests fail rather than skip when they are missing.
export HITL_TEST_REQUIRE_MCP_PACKAGES=1

echo "== claude code (internal/claudetest)"
# The internal/claudetest tests run the real Claude Code CLI against a fake
# Messages API on loopback. It comes from the npm registry (a native binary
# of ~400 MB, in an optional dependency) into the git-ignored
# internal/claudetest/testdata/node_modules, pinned to the version the
# fixtures there were confirmed against; installed only when missing.
CLAUDE_CODE_VERSION=2.1.332
claude=internal/claudetest/testdata/node_modules/@anthropic-ai/claude-code/bin/claude.exe
if ! "$claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION "; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix internal/claudetest/testdata "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null
  "$claude" --version | grep -q "^$CLAUDE_CODE_VERSION "
fi
# The channel relay's tests drive Claude Code's interactive terminal in
# tmux (Debian's), installed only when missing.
if ! command -v tmux >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
fi
# Set, so the Claude Code tests fail rather than skip when it is missing.
export HITL_TEST_REQUIRE_CLAUDE=1

echo "== podman, runc and systemd-analyze (deploy)"
# deploy's tests build the container image FROM scratch with podman (no
# registry needed) and run it, with runc where crun cannot run here, and
# verify the systemd unit with systemd-analyze: Debian's, installed only
# when missing. Where containers cannot run at all, the podman test skips
# with podman's error and the image's files are run directly.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || ! command -v systemd-analyze >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc systemd >/dev/null
fi

echo "== codex (internal/codextest)"
# The internal/codextest tests run the real OpenAI Codex CLI against a fake
# Responses API on loopback. It comes from the npm registry (a native binary
# of ~300 MB, in an optional dependency) into the git-ignored
# internal/codextest/testdata/node_modules, pinned to the version the
# fixtures there were confirmed against; installed only when missing.
CODEX_VERSION=0.169.0
codex=internal/codextest/testdata/node_modules/.bin/codex
if ! "$codex" --version 2>/dev/null | grep -qx "codex-cli $CODEX_VERSION"; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix internal/codextest/testdata "@openai/codex@$CODEX_VERSION" >/dev/null
  "$codex" --version | grep -qx "codex-cli $CODEX_VERSION"
fi
# Set, so the Codex tests fail rather than skip when it is missing.
export HITL_TEST_REQUIRE_CODEX=1

echo "== gemini cli (internal/geminitest)"
# The internal/geminitest tests run the real Gemini CLI (node) against a
# fake Gemini API on loopback, from the npm registry into the git-ignored
# internal/geminitest/testdata/node_modules, pinned like Claude Code's;
# installed only when missing.
GEMINI_CLI_VERSION=0.61.0
gemini=internal/geminitest/testdata/node_modules/.bin/gemini
if ! "$gemini" --version 2>/dev/null | grep -qx "$GEMINI_CLI_VERSION"; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix internal/geminitest/testdata "@google/gemini-cli@$GEMINI_CLI_VERSION" >/dev/null
  "$gemini" --version | grep -qx "$GEMINI_CLI_VERSION"
fi
# Set, so the Gemini CLI tests fail rather than skip when it is missing.
export HITL_TEST_REQUIRE_GEMINI=1

echo "== copilot cli (internal/copilottest)"
# The internal/copilottest tests run the real GitHub Copilot CLI, offline,
# against a fake OpenAI-compatible API on loopback. It comes from the npm
# registry (a native binary of ~200 MB, in an optional dependency) into the
# git-ignored internal/copilottest/testdata/node_modules, pinned to the
# version the fixtures there were confirmed against; installed only when
# missing.
COPILOT_CLI_VERSION=1.0.102
copilot=internal/copilottest/testdata/node_modules/.bin/copilot
if ! "$copilot" --version 2>/dev/null | grep -qx "GitHub Copilot CLI $COPILOT_CLI_VERSION."; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix internal/copilottest/testdata "@github/copilot@$COPILOT_CLI_VERSION" >/dev/null
  "$copilot" --version | grep -qx "GitHub Copilot CLI $COPILOT_CLI_VERSION."
fi
# Set, so the Copilot CLI tests fail rather than skip when it is missing.
export HITL_TEST_REQUIRE_COPILOT=1

echo "== opencode (internal/opencodetest)"
# The internal/opencodetest tests run the real OpenCode against a fake
# OpenAI-compatible API on loopback, from the npm registry (a native binary
# in an optional dependency) into the git-ignored
# internal/opencodetest/testdata/node_modules, pinned like the others;
# installed only when missing.
OPENCODE_VERSION=1.18.33
opencode=internal/opencodetest/testdata/node_modules/.bin/opencode
if ! "$opencode" --version 2>/dev/null | grep -qx "$OPENCODE_VERSION"; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix internal/opencodetest/testdata "opencode-ai@$OPENCODE_VERSION" >/dev/null
  "$opencode" --version | grep -qx "$OPENCODE_VERSION"
fi
# Set, so the OpenCode tests fail rather than skip when it is missing.
export HITL_TEST_REQUIRE_OPENCODE=1

echo "== cline (internal/clinetest)"
# The internal/clinetest tests run the real Cline CLI against a fake
# OpenAI-compatible API on loopback. It comes from the npm registry (a
# native binary with Bun inside, in an optional dependency) into the
# git-ignored internal/clinetest/testdata/node_modules, pinned like the
# others; installed only when missing.
CLINE_VERSION=3.0.65
cline=internal/clinetest/testdata/node_modules/@cline/cli-linux-x64/bin/cline
if ! "$cline" --version 2>/dev/null | grep -q "$CLINE_VERSION"; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix internal/clinetest/testdata "cline@$CLINE_VERSION" >/dev/null
  "$cline" --version | grep -q "$CLINE_VERSION"
fi
# Set, so the Cline tests fail rather than skip when it is missing.
export HITL_TEST_REQUIRE_CLINE=1

echo "== clients (Python and TypeScript)"
# clients/ runs the Python client's tests with Debian's pytest (and mypy),
# and compiles the TypeScript client with the pinned typescript (npm ci into
# its git-ignored node_modules, with the frameworks its adapters' tests
# run) to run its tests with node --test. Each is
# installed only when missing; set, so those tests fail rather than skip
# when a tool is absent.
# python3-cryptography: the Python client's optional receipt verifier.
if ! /usr/bin/python3 -c 'import pytest, mypy, cryptography' 2>/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pytest python3-mypy python3-cryptography >/dev/null
fi
# The TypeScript package's dev dependencies are pinned: typescript, and the
# frameworks its adapters are tested against (ai, @langchain/langgraph,
# langchain, @openai/agents, zod); npm ci when any is not the pinned version.
if ! node -e '
  const dir = "./clients/typescript/";
  for (const [name, version] of Object.entries(require(dir + "package.json").devDependencies)) {
    if (require(dir + "node_modules/" + name + "/package.json").version !== version) process.exit(1);
  }' 2>/dev/null; then
  (cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
export HITL_TEST_REQUIRE_CLIENTS=1

echo "== openapi lint"
# The OpenAPI document is linted by Redocly CLI (from the npm registry,
# installed into the git-ignored .cache/redocly only when missing), with the
# rules in redocly.yaml; the Go tests check it against the routes and every
# response.
REDOCLY_VERSION=2.77.0
if ! grep -qs "\"version\": \"$REDOCLY_VERSION\"" .cache/redocly/node_modules/@redocly/cli/package.json; then
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    --prefix .cache/redocly "@redocly/cli@$REDOCLY_VERSION" >/dev/null
fi
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  .cache/redocly/node_modules/.bin/redocly lint --format=stylish openapi/openapi.json

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck"
STATICCHECK_VERSION=v0.8.2
staticcheck=$(go env GOPATH)/bin/staticcheck
if ! "$staticcheck" -version 2>/dev/null | grep -q "(${STATICCHECK_VERSION#v})"; then
  go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$staticcheck" ./...

echo "== fuzz (short)"
# Bounded by a number of inputs (about ten seconds' worth each on this kind
# of machine), not by a duration: at the end of a -fuzztime duration Go
# 1.26's fuzzing can report a worker's cancelled context as a failure,
# "context deadline exceeded", with no failing input (go.dev/issue/75804,
# fixed in Go 1.27), most often on a loaded machine. Minimizing a new
# interesting input is bounded by time (its timeout ends it quietly): it
# runs in one worker, often while the other waits, its inputs count toward
# the run's, and by default it may take a minute per input.
go test -run='^$' -fuzz='^FuzzNormalizeAnswer$' -fuzztime=30000x -fuzzminimizetime=2s .
go test -run='^$' -fuzz='^FuzzPattern$' -fuzztime=400000x -fuzzminimizetime=2s ./shell

echo "== go test -race"
# ui (a real Chromium under -race) is the longest package by far: named
# first, it starts first, and the others share the second slot with it,
# rather than it running alone at the end.
#
# SQLite itself (modernc.org/sqlite/lib, C translated to Go, and its C
# library, modernc.org/libc) is built without the race detector's
# instrumentation, as SQLite built with cgo would be: every package of
# ours, and the database/sql driver (modernc.org/sqlite), is still
# instrumented, and a race in our code is still reported. Instrumented,
# SQLite ran about three times slower under every test that stores
# anything (./sqlite 86 s against 24 s, ./broker 130-170 s against 43 s).
nosqliterace=(-gcflags='modernc.org/sqlite/lib=-race=false' -gcflags='modernc.org/libc/...=-race=false')
go test -race "${nosqliterace[@]}" -count=1 -timeout=20m ./ui/ ./...
