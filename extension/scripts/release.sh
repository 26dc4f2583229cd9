#!/usr/bin/env bash
# `make release-check` and the release workflow (.github/workflows/release.yml): every vsix a release
# publishes, into extension/release/ (RELEASE_DIR): the universal one and one per vsce target, each built
# as `make vsix TARGET=...` builds it (vsce warnings fail it). Publishing is the workflow's own step.
set -euo pipefail
source "$(dirname "$0")/tools.sh"
TARGETS=(linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64)
out=${RELEASE_DIR:-$EXTENSION_DIR/release}
version=$(node -p 'require(process.argv[1]).version' "$EXTENSION_DIR/package.json")
rm -rf "$out"
mkdir -p "$out"
cd "$EXTENSION_DIR"
started=$SECONDS
build_wheel
ensure_node
ensure_npm_deps
compile
bundle_npm
for target in "" "${TARGETS[@]}"; do
  platform_files "$target"
  package_vsix "$out/symposium-${target:+$target-}$version.vsix" "$target"
done
platform_files ""
log "release-check: $((${#TARGETS[@]} + 1)) vsix files in $((SECONDS - started)) s:"
(cd "$out" && ls -l --block-size=K *.vsix | awk '{print "  " $5 "  " $9}' >&2)
