# Sourced by test.sh and vsix.sh: installs, once, what the extension's build and tests need, into a
# cache outside the repository (SYMPOSIUM_VSCODE_CACHE, default ~/.cache/symposium-vscode), and puts
# Node 24 first on PATH. Every step is skipped when its result is already there.
#   Node 24:      the npm package node-linux-<arch> (a Node binary and its headers)
#   code-server:  the npm package (VS Code for the browser), its native modules built against Node 24
#   Chromium:     Debian's, driven by playwright-core
#   npm ci:       the extension's devDependencies, from package-lock.json

NODE_VERSION=24.21.0
# The npm every vsix carries (extension/npm/): npm agents install with it where PATH has no npm, and run on
# VS Code's own Node (docs/usage.md, "What Symposium needs on your machine"). Its engines: ^20.17.0 || >=22.9.0.
BUNDLED_NPM_VERSION=11.21.2
BUNDLED_NPM_INTEGRITY=sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A==
CODE_SERVER_VERSION=4.139.1
EXTENSION_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SYMPOSIUM_VSCODE_CACHE:-$HOME/.cache/symposium-vscode}

log() { printf '[extension] %s\n' "$*" >&2; }

# Installs one npm package into $CACHE/<name> (atomically: a half-done install is never reused).
install_cached() {
  local name=$1 package=$2 target="$CACHE/$1"
  [ -f "$target/.done" ] && return 0
  log "installing $package into $target (once)"
  rm -rf "$target.partial"
  mkdir -p "$target.partial"
  (cd "$target.partial" && npm install --no-save --no-package-lock --no-audit --no-fund --omit=dev --loglevel=error "$package" >&2)
  touch "$target.partial/.done"
  rm -rf "$target"
  mv "$target.partial" "$target"
}

apt_install() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo="sudo" # a CI runner's user (.github/workflows/release.yml)
  log "apt-get install $*"
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >&2
}

ensure_node() {
  if ! command -v npm >/dev/null; then
    apt_install nodejs npm
  fi
  local arch
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) log "no Node 24 package for $(uname -m)"; return 1 ;;
  esac
  install_cached "node-$NODE_VERSION" "node-linux-$arch@$NODE_VERSION"
  NODE_HOME="$CACHE/node-$NODE_VERSION/node_modules/node-linux-$arch"
  export PATH="$NODE_HOME/bin:$PATH"
  export npm_config_nodedir="$NODE_HOME" # native modules build against these headers
}

ensure_chromium() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  # code-server's kerberos module compiles against it, so only needed before that install
  [ -f "$CACHE/code-server-$CODE_SERVER_VERSION/.done" ] || dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
}

ensure_code_server() {
  install_cached "code-server-$CODE_SERVER_VERSION" "code-server@$CODE_SERVER_VERSION"
  export CODE_SERVER="$CACHE/code-server-$CODE_SERVER_VERSION/node_modules/.bin/code-server"
}

# npm ci when package-lock.json changed since the last one.
ensure_npm_deps() {
  local stamp="$EXTENSION_DIR/node_modules/.symposium-lock" lock
  lock=$(sha256sum "$EXTENSION_DIR/package-lock.json" | cut -d' ' -f1)
  [ "$(cat "$stamp" 2>/dev/null)" = "$lock" ] && return 0
  log "npm ci"
  (cd "$EXTENSION_DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
  echo "$lock" >"$stamp"
}

compile() {
  rm -rf "$EXTENSION_DIR/out"
  (cd "$EXTENSION_DIR" && node node_modules/typescript/bin/tsc -p .)
}

# The backend's wheel, into extension/backend/ (what the vsix carries), built from the repository, with
# the lock beside it (requirements.txt, from `make lock`: what the private venv installs, hashes checked),
# once the lock is seen to agree with pyproject.toml.
build_wheel() {
  local python=${PYTHON:-python3} started=$SECONDS
  [ -x "$EXTENSION_DIR/../.venv/bin/python" ] && python="$EXTENSION_DIR/../.venv/bin/python"
  "$python" "$EXTENSION_DIR/../scripts/lock.py" --check || return 1
  rm -rf "$EXTENSION_DIR/backend" "$EXTENSION_DIR/../build"
  "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$EXTENSION_DIR/backend" "$EXTENSION_DIR/.." >&2
  rm -rf "$EXTENSION_DIR/../build"
  cp "$EXTENSION_DIR/../requirements.txt" "$EXTENSION_DIR/backend/requirements.txt"
  log "backend wheel: $(ls "$EXTENSION_DIR/backend" | tr '\n' ' ')($((SECONDS - started)) s)"
}

# npm itself (an npm package, its dependencies bundled in it) as its tarball from the npm registry, checked
# against the pinned integrity, into extension/npm/ (one file: the extension unpacks it on first use; npm's
# 1,100 scripts unpacked would make vsce warn). The tarball is kept in the cache.
bundle_npm() {
  local tarball="$CACHE/npm-$BUNDLED_NPM_VERSION.tgz" got
  if [ ! -f "$tarball" ]; then
    mkdir -p "$CACHE"
    (cd "$CACHE" && npm pack --silent "npm@$BUNDLED_NPM_VERSION" >/dev/null)
  fi
  got=$(node -e 'console.log("sha512-" + require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$tarball")
  if [ "$got" != "$BUNDLED_NPM_INTEGRITY" ]; then
    log "$tarball is not npm $BUNDLED_NPM_VERSION as pinned ($got); not used"
    rm -f "$tarball"
    return 1
  fi
  rm -rf "$EXTENSION_DIR/npm"
  mkdir -p "$EXTENSION_DIR/npm"
  cp "$tarball" "$EXTENSION_DIR/npm/"
}

# What a per-platform vsix carries beyond the universal one ($1: a vsce target): the backend's locked
# wheels for that platform and its uv (extension/scripts/vsix_target.py). Without a target: neither.
platform_files() {
  rm -rf "$EXTENSION_DIR/bin" "$EXTENSION_DIR/backend/wheels"
  [ -n "${1:-}" ] || return 0
  local python=${PYTHON:-python3} started=$SECONDS
  [ -x "$EXTENSION_DIR/../.venv/bin/python" ] && python="$EXTENSION_DIR/../.venv/bin/python"
  SYMPOSIUM_VSCODE_CACHE="$CACHE" "$python" "$EXTENSION_DIR/scripts/vsix_target.py" "$1" "$EXTENSION_DIR"
  log "$1: platform files in $((SECONDS - started)) s"
}

# The vsix, at $1 (vsce's default name when empty), for the vsce target $2 (none: the universal one). vsce only prints its warnings (a missing repository,
# license or icon, a README it cannot show) and packages anyway, so a warning fails the build here: the vsix
# must be publishable as it is.
package_vsix() {
  local out
  out=$(cd "$EXTENSION_DIR" && node node_modules/@vscode/vsce/vsce package --no-dependencies ${2:+--target "$2"} ${1:+-o "$1"} </dev/null 2>&1) || { printf '%s\n' "$out" >&2; return 1; }
  if grep -q WARNING <<<"$out"; then
    printf '%s\n' "$out" >&2
    log "vsce warned: fix the manifest or the files above"
    return 1
  fi
  grep -E 'DONE|Packaged' <<<"$out" >&2 || true
}
