"""Real ACP agents: Claude Code's and Codex's adapters as subprocesses, their model APIs faked (`tests/support/`)."""
