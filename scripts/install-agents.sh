#!/usr/bin/env bash
# Install the real ACP agents the tests run (offline, against fakes) into a cache outside the repo.
#
#   scripts/install-agents.sh [AGENT...]          install if missing (idempotent; a no-op when cached)
#   scripts/install-agents.sh --print AGENT       print AGENT's install folder, install nothing
#
# AGENT is `claude`, `codex` or `gemini` (no AGENT: all three). Each goes to
# ${SYMPOSIUM_AGENTS_CACHE:-~/.cache/symposium-agents}/<package>-<version>:
#   claude  @agentclientprotocol/claude-agent-acp, entry point node_modules/.bin/claude-agent-acp
#   codex   @zed-industries/codex-acp, entry point node_modules/.bin/codex-acp (its native binary comes
#           in the per-platform registry package it lists as an optional dependency)
#   gemini  @google/gemini-cli, entry point node_modules/.bin/gemini (its ACP mode: `--acp`)
# Needs node and npm; only the npm registry is used. Without npm it says so and exits 0: the tests
# that need an agent then skip with that reason. It exits 1 if an install failed.
#
# With no AGENT it also installs every npm and PyPI agent of the bundled catalogue at its catalogue
# version, for the conformance suite (tests/support/catalogue_agents.py says how; `--pinned` installs
# only the agents above).
set -euo pipefail

if [[ $# -eq 0 ]]; then
    status=0
    bash "$0" --pinned || status=1
    (cd "$(dirname "$0")/.." && python3 -m tests.support.catalogue_agents install) || status=1
    exit $status
fi
[[ "$1" != "--pinned" ]] || shift

CLAUDE_AGENT_ACP_VERSION=0.100.0   # @agentclientprotocol/claude-agent-acp; tests/support/claude.py reads this line
CODEX_ACP_VERSION=0.16.0           # @zed-industries/codex-acp; tests/support/codex.py reads this line
GEMINI_CLI_VERSION=0.61.0          # @google/gemini-cli; tests/agents/test_sign_in.py reads this line

cache="${SYMPOSIUM_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/symposium-agents}"

# agent name -> "package version entry-point-name"
spec() {
    case "$1" in
        claude) echo "@agentclientprotocol/claude-agent-acp $CLAUDE_AGENT_ACP_VERSION claude-agent-acp" ;;
        codex) echo "@zed-industries/codex-acp $CODEX_ACP_VERSION codex-acp" ;;
        gemini) echo "@google/gemini-cli $GEMINI_CLI_VERSION gemini" ;;
        *) echo "install-agents: unknown agent '$1' (claude, codex or gemini)" >&2; exit 2 ;;
    esac
}

folder() {  # agent -> its install folder
    local package version bin
    read -r package version bin <<<"$(spec "$1")"
    echo "$cache/${package##*/}-$version"
}

staging=""
trap '[[ -z "$staging" ]] || rm -rf "$staging"' EXIT   # an interrupted install leaves nothing half-made

install() {  # agent -> 0 when installed (or already there)
    local package version bin dest start
    read -r package version bin <<<"$(spec "$1")"
    dest="$(folder "$1")"
    [[ -f "$dest/.installed" ]] && return 0
    mkdir -p "$cache"
    staging="$(mktemp -d "$cache/.staging.XXXXXX")"
    echo "install-agents: $package@$version -> $dest" >&2
    start=$SECONDS
    # Claude's adapter declares node >=22 but runs on node 20 (its CLI is a native binary from a registry package).
    if ! npm install --prefix "$staging" --no-save --no-audit --no-fund --no-package-lock --loglevel=error --engine-strict=false \
            "$package@$version" >&2 || ! test -x "$staging/node_modules/.bin/$bin"; then
        rm -rf "$staging"
        echo "install-agents: $package@$version failed" >&2
        return 1
    fi
    chmod 755 "$staging"
    touch "$staging/.installed"
    [[ -f "$dest/.installed" ]] || rm -rf "$dest"   # not a finished install: replace it
    mv -T "$staging" "$dest" 2>/dev/null || { rm -rf "$staging"; [[ -f "$dest/.installed" ]]; }   # or a concurrent run finished first
    echo "install-agents: done in $((SECONDS - start)) s ($(du -sh "$dest" | cut -f1))" >&2
}

if [[ "${1:-}" == "--print" ]]; then
    folder "${2:-claude}"
    exit 0
fi

agents=("$@")
[[ ${#agents[@]} -gt 0 ]] || agents=(claude codex gemini)
for agent in "${agents[@]}"; do spec "$agent" >/dev/null; done
missing=()
for agent in "${agents[@]}"; do
    [[ -f "$(folder "$agent")/.installed" ]] || missing+=("$agent")
done
[[ ${#missing[@]} -gt 0 ]] || exit 0
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "install-agents: node/npm not found; the tests of ${missing[*]} will be skipped" >&2
    exit 0
fi
failed=0
for agent in "${missing[@]}"; do
    install "$agent" || failed=1
done
exit $failed
