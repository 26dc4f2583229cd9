#!/usr/bin/env python3
"""Builds extension/catalogue/registry.json, the agent catalogue shipped in the extension, from a
checkout of the ACP registry (github.com/agentclientprotocol/registry): every `<id>/agent.json` it
publishes, aggregated as the registry's own build does (icons as CDN URLs), then the entries of
extension/catalogue/overrides.json (added, or replacing the registry's entry with the same id;
`remove` drops ids; `include` adds entries from folders the registry does not publish).

    python3 extension/scripts/catalogue.py REGISTRY_CHECKOUT > extension/catalogue/registry.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

CDN = "https://cdn.agentclientprotocol.com/registry/v1/latest"
OVERRIDES = Path(__file__).resolve().parent.parent / "catalogue" / "overrides.json"


def entry(folder: Path) -> dict:
    agent = json.loads((folder / "agent.json").read_text())
    if (folder / "icon.svg").exists():
        agent["icon"] = f"{CDN}/{agent['id']}.svg"
    return agent


def main(checkout: str) -> None:
    root = Path(checkout)
    overrides = json.loads(OVERRIDES.read_text())
    agents = {
        folder.name: entry(folder)
        for folder in sorted(root.iterdir())
        if folder.is_dir() and not folder.name.startswith((".", "_")) and (folder / "agent.json").exists()
    }
    for path in overrides.get("include", []):
        agents[Path(path).name] = entry(root / path)
    for removed in overrides.get("remove", []):
        agents.pop(removed, None)
    for agent in overrides.get("agents", []):
        agents[agent["id"]] = agent
    registry = {"version": "1.0.0", "agents": sorted(agents.values(), key=lambda a: a["name"].lower()), "extensions": []}
    json.dump(registry, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
