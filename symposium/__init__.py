"""Symposium: ACP agents as VS Code language models."""

__version__ = "0.1.0"
