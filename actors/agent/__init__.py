"""The AgentProcess actor: one agent's process, its ACP sessions, and what it asks of us."""
