"""VS Code's tools as the MCP server `vscode_tools`: names, policy, schemas, transport."""
