#!/usr/bin/env bash
# `make vsix`: builds extension/symposium-<version>.vsix with @vscode/vsce, the backend's wheel inside
# (extension/backend/) with its lock (requirements.txt: exact versions and hashes), which the extension
# installs into a private venv on first activation.
#   VSIX_OUT=FILE   where to write it (default: extension/symposium-<version>.vsix)
set -euo pipefail
source "$(dirname "$0")/tools.sh"
cd "$EXTENSION_DIR"
build_wheel
ensure_node
ensure_npm_deps
compile
package_vsix "${VSIX_OUT:-}"
