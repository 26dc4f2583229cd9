#!/usr/bin/env bash
# The extension's tests (run by `make test`): the unit tests (node's test runner; the JSON-RPC client
# against the real backend, the catalogue, real installs of agents), the integration tests in a real
# VS Code (code-server + Chromium), then the install phase: the built vsix in a clean profile, then the
# bare-machine phase: the linux-x64 vsix on a machine with no Python and no Node (out/test/bare.js).
# SCREENSHOTS=DIR puts the Chat view tests' screenshots there (SCREENSHOTS=docs for the README's).
set -euo pipefail
[ -z "${SCREENSHOTS:-}" ] || SCREENSHOTS=$(realpath -m "$SCREENSHOTS")
source "$(dirname "$0")/tools.sh"
cd "$EXTENSION_DIR"

export SYMPOSIUM_BACKEND=${SYMPOSIUM_BACKEND:-$(cd .. && pwd)/.venv/bin/symposium}
if [ ! -x "$SYMPOSIUM_BACKEND" ]; then
  log "no backend at $SYMPOSIUM_BACKEND: run 'make setup' first (or set SYMPOSIUM_BACKEND)"
  exit 1
fi

started=$SECONDS
ensure_node
ensure_chromium
ensure_code_server
ensure_npm_deps
log "tools ready in $((SECONDS - started)) s"

started=$SECONDS
build_wheel
compile
bundle_npm # the npm every vsix carries: the unit tests install with it too
if [ "$(uname -m)" = x86_64 ]; then # the uv linux-x64's vsix carries: the unit tests provision with it too
  python=python3
  [ -x ../.venv/bin/python ] && python=../.venv/bin/python
  SYMPOSIUM_TEST_UV=$(SYMPOSIUM_VSCODE_CACHE="$CACHE" "$python" scripts/vsix_target.py --uv linux-x64 "$CACHE/uv-linux-x64")
  export SYMPOSIUM_TEST_UV
fi
node --test --test-reporter=spec out/test/unit/*.test.js
log "unit tests: $((SECONDS - started)) s"

status=0
node out/test/runner.js ${SCREENSHOTS:+--screenshots "$SCREENSHOTS"} || status=1

started=$SECONDS
vsix="$EXTENSION_DIR/out/symposium-test.vsix"
platform_files ""
package_vsix "$vsix"
WHEELHOUSE_CACHE="$CACHE" node out/test/install.js --vsix "$vsix" || status=1
log "install phase (vsix included): $((SECONDS - started)) s"

# A machine with nothing but VS Code: the linux-x64 vsix, no Python, no Node, no package index for the backend
# (docs/development.md). Only where that vsix runs: x86_64 Linux.
started=$SECONDS
if [ "$(uname -m)" = x86_64 ]; then
  vsix="$EXTENSION_DIR/out/symposium-linux-x64-test.vsix"
  platform_files linux-x64
  package_vsix "$vsix" linux-x64 || status=1
  platform_files ""
  WHEELHOUSE_CACHE="$CACHE" node out/test/bare.js --vsix "$vsix" || status=1
  log "bare-machine phase (vsix included): $((SECONDS - started)) s"
fi
exit $status
