"""VS Code's side of the wire: the LM types the extension sends, its data parts, Copilot's prompt wrappers, an agent's identity as a model."""
