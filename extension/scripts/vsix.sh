#!/usr/bin/env bash
# `make vsix`: builds extension/symposium-<version>.vsix with @vscode/vsce, the backend's wheel inside
# (extension/backend/) with its lock (requirements.txt: exact versions and hashes), which the extension
# installs into a private venv on first activation.
#   VSIX_OUT=FILE   where to write it (default: extension/symposium-<version>.vsix, or -<target>- with TARGET)
#   TARGET=T        a per-platform vsix (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64,
#                   win32-arm64): it also carries the backend's wheels for T and T's uv, so the first start
#                   needs no package index and no Python (docs/development.md, "Packages per platform")
set -euo pipefail
source "$(dirname "$0")/tools.sh"
cd "$EXTENSION_DIR"
build_wheel
ensure_node
ensure_npm_deps
compile
bundle_npm
platform_files "${TARGET:-}"
status=0
package_vsix "${VSIX_OUT:-}" "${TARGET:-}" || status=1
platform_files "" # the platform's files go into its vsix only: the next build, or a test, starts without them
exit $status
