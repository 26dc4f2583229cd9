# The two commands of the README: `make chat` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready

.PHONY: chat test check bench setup clean agents vsix release-check transcripts lock catalogue

setup: $(READY)

# The backend's dependencies from the lock first (the versions and files the vsix installs), then the
# project and what its tests need.
$(READY): pyproject.toml requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --only-binary :all: -r requirements.txt
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

# requirements.txt again from pyproject.toml (exact versions, every file's sha256; docs/development.md).
lock: $(READY)
	@$(BIN)/python scripts/lock.py

chat: $(READY)
	@$(BIN)/symposium chat

# The real ACP agents the tests run offline (Claude Code's and Codex's adapters, Gemini CLI, and every npm/PyPI
# agent of the catalogue for tests/agents/test_conformance.py), cached outside the repo.
agents:
	@bash scripts/install-agents.sh || echo "make: scripts/install-agents.sh failed; the tests of the agents it could not install will say why and skip" >&2

# The Python half's floor, as strict as the TypeScript half's compiler: lint and import order (ruff), types
# (mypy; strict on protocol/). Configured in pyproject.toml; a finding fails `make test` as a failing test does.
check: $(READY)
	$(BIN)/ruff check .
	$(BIN)/mypy

test: $(READY) check agents
	$(BIN)/python -m pytest -q
	bash extension/scripts/test.sh

# The VS Code extension as an installable package: extension/symposium-<version>.vsix, or with
# TARGET=<vsce target> (linux-x64, darwin-arm64, ...) extension/symposium-<target>-<version>.vsix, which also
# carries that platform's locked wheels and uv (docs/development.md, "Packages per platform").
vsix: $(READY)
	@TARGET=$(TARGET) bash extension/scripts/vsix.sh

# What .github/workflows/release.yml builds, without publishing: the universal vsix and one per platform,
# into extension/release/, with their sizes.
release-check: $(READY)
	@bash extension/scripts/release.sh

# Re-record tests/support/transcripts/ from real runs (Eliza; Claude Code and Codex against fake model APIs).
transcripts: $(READY) agents
	$(BIN)/python -m tests.support.record_transcripts

# The agent catalogue shipped in the extension, rebuilt from the ACP registry's published registry.json
# (or REGISTRY=<a registry.json file, a checkout or a bare git directory of agentclientprotocol/registry>), with
# extension/catalogue/overrides.json applied and every npm/PyPI pin checked (docs/usage.md, "The catalogue").
catalogue:
	$(PYTHON) extension/scripts/catalogue.py $(REGISTRY) > extension/catalogue/registry.json.new
	mv extension/catalogue/registry.json.new extension/catalogue/registry.json

bench: $(READY)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info
