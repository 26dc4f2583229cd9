#!/usr/bin/env bash
# `make vsix`: builds extension/symposium-<version>.vsix with @vscode/vsce.
set -euo pipefail
source "$(dirname "$0")/tools.sh"
cd "$EXTENSION_DIR"
ensure_node
ensure_npm_deps
compile
node node_modules/@vscode/vsce/vsce package --no-dependencies --allow-missing-repository --skip-license
