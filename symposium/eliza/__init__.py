"""The built-in Eliza agent."""
