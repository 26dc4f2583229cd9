#!/usr/bin/env bash
# Install the real ACP agents the tests run (offline, against fakes) into a cache outside the repo:
# every npm and PyPI agent of the bundled catalogue (extension/catalogue/registry.json) at its catalogue
# version, Claude Code's, Codex's and Gemini CLI's adapters among them, each by the extension's own
# installer, as Add Agent installs it (tests/support/catalogue_agents.py says how and where).
#
#   scripts/install-agents.sh [ID...]       install what is missing (idempotent; a no-op when cached)
#   scripts/install-agents.sh --installer   build the extension's installer for node (again only when its
#                                           sources changed) and print the script's path
#
# ID is a catalogue id (claude-acp, codex-acp, gemini, ...); none: all of them. Needs node and npm (Node 24
# is installed into the extension's tool cache when missing, as for the extension's build); only the package
# registries are used. When npm cannot be had it says so and exits 0: the tests that need an agent then
# skip with that reason. It exits 1 if an install failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

if [[ "${1:-}" == "--installer" ]]; then
    source "$root/extension/scripts/tools.sh"
    ensure_node >/dev/null
    ensure_npm_deps >/dev/null
    out="$root/extension/out-installer"   # its own folder: a build here never disturbs out/ in use
    script="$out/test/installAgent.js"
    if [[ ! -f "$script" ]] || [[ -n "$(find "$root/extension/src" "$root/extension/tsconfig.json" -newer "$script" -print -quit)" ]]; then
        rm -rf "$out.partial"
        (cd "$root/extension" && node node_modules/typescript/bin/tsc -p . --outDir "$out.partial" >&2)
        rm -rf "$out"
        mv "$out.partial" "$out"
    fi
    echo "$script"
    exit 0
fi

source "$root/extension/scripts/tools.sh"
# Node 24 first on PATH (npm from the system's packages first where there is none): the agents' records
# name the node that installed them.
if ! ensure_node >/dev/null || ! command -v npm >/dev/null; then
    echo "install-agents: node/npm could not be installed; the tests of the catalogue's agents will be skipped" >&2
    exit 0
fi
cd "$root" && exec python3 -m tests.support.catalogue_agents install "$@"
