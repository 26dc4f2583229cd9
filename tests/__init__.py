"""The tests, in tiers by what they run (each tier's `__init__.py` says more):

- `unit/`: pure decisions and formats, no trio, no sockets, no subprocesses;
- `actors/`: trio actors, stores and streams in-process (the JSON-RPC `Peer`, History, the tool bridge);
- `wire/`: a real `symposium vscodelm` subprocess over stdio, with Eliza or fake agents;
- `agents/`: the real ACP agents (Claude Code's and Codex's adapters) against fake model APIs,
  one scenario suite run against each (`agents/test_scenarios.py`);
- `support/`: what the tests use and are not: fake model APIs, agent drivers, misbehaving agents
  run as subprocesses, the Copilot emulator, fixtures and the transcript corpus.

`conftest.py` holds the fixtures every tier shares (`backend`, `tap`).
"""
