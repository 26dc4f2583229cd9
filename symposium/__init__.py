"""Symposium: ACP agents as VS Code language models (its version: `actors.version.version()`)."""
