"""One agent definition's identity: the key its process, its remembered sessions and what is learned
of it are kept under, and the name it is shown by."""

from __future__ import annotations

from protocol.shared.structuring import canonical_json
from protocol.vscode.lm import Agent, ElizaAgent, agent_to_wire


def agent_key(agent: Agent) -> str:
    """One agent definition, one key: for the pool's processes and the remembered sessions."""
    return canonical_json(agent_to_wire(agent), escaped=True)


def agent_label(agent: Agent) -> str:
    if isinstance(agent, ElizaAgent):
        return "Eliza"
    return agent.name or agent.command
