"""Symposium: ACP agents as VS Code language models (its version: `protocol.version.version()`)."""
