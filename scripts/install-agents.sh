#!/usr/bin/env bash
# Install the real ACP agents the tests run (offline, against fakes) into a cache outside the repo.
#
#   scripts/install-agents.sh            install if missing (idempotent; a no-op when cached)
#   scripts/install-agents.sh --print    print the install folder, install nothing
#
# Claude Code's ACP adapter goes to ${SYMPOSIUM_AGENTS_CACHE:-~/.cache/symposium-agents}/claude-agent-acp-<version>,
# its entry point at node_modules/.bin/claude-agent-acp. Needs node and npm; only the npm registry is used.
# Without npm it says so and exits 0: the tests that need the agent then skip with that reason.
set -euo pipefail

CLAUDE_AGENT_ACP_VERSION=0.100.0   # @agentclientprotocol/claude-agent-acp; tests/claude.py reads this line

cache="${SYMPOSIUM_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/symposium-agents}"
dest="$cache/claude-agent-acp-$CLAUDE_AGENT_ACP_VERSION"

if [[ "${1:-}" == "--print" ]]; then
    echo "$dest"
    exit 0
fi
if [[ -f "$dest/.installed" ]]; then
    exit 0
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
    echo "install-agents: node/npm not found; the Claude Code tests will be skipped" >&2
    exit 0
fi

mkdir -p "$cache"
staging="$(mktemp -d "$cache/.staging.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
echo "install-agents: @agentclientprotocol/claude-agent-acp@$CLAUDE_AGENT_ACP_VERSION -> $dest" >&2
start=$SECONDS
# The adapter declares node >=22 but runs on node 20 (its CLI is a native binary from a registry package).
npm install --prefix "$staging" --no-save --no-audit --no-fund --no-package-lock --loglevel=error --engine-strict=false \
    "@agentclientprotocol/claude-agent-acp@$CLAUDE_AGENT_ACP_VERSION" >&2
test -x "$staging/node_modules/.bin/claude-agent-acp"
chmod 755 "$staging"
touch "$staging/.installed"
[[ -f "$dest/.installed" ]] || rm -rf "$dest"   # not a finished install: replace it
mv -T "$staging" "$dest" 2>/dev/null || [[ -f "$dest/.installed" ]]   # or a concurrent run finished first
echo "install-agents: done in $((SECONDS - start)) s ($(du -sh "$dest" | cut -f1))" >&2
