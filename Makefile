# The two commands of the README: `make chat` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready

.PHONY: chat test bench setup clean

setup: $(READY)

$(READY): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $@

chat: $(READY)
	@$(BIN)/symposium chat

test: $(READY)
	$(BIN)/python -m pytest -q

bench: $(READY)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info
