"""What the backend has learned about each agent definition, kept across restarts.

Per agent definition: the choices its sessions offer (models, modes, effort, ...), whether it
takes images in a prompt, the context window it reported for each of its model entries, and the
bytes per token its usage implies.
The model picker lists an agent's models from here, so after a restart they are there before
the agent runs again; token counts use the bytes per token.

Kept in SQLite in the user's state folder (a 0600 file in a 0700 folder), one row per agent
definition under a keyed digest of it: definitions carry environment values (API keys), and
nothing stored here is one. Every row is read once, at start-up (one row per agent definition
ever used: few); a change is one small statement queued to a writer thread
(`actors/store/database.py`), so a locked file never stalls the turn that learned something.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import sqlite3
import time
from pathlib import Path

import attrs
import trio

from actors.store.database import Database, open_store
from protocol.acp import continuing
from protocol.acp.agent_options import Choice, choices_from_json, choices_to_json, model_values
from protocol.acp.agent_text import shown_or_none
from protocol.acp.commands import AgentCommand, commands_from_json
from protocol.acp.usage import TurnUsage, add_sample, bytes_per_token
from protocol.vscode.lm import Message

log = logging.getLogger(__name__)

SCHEMA = """
create table if not exists agents (
    agent text primary key,  -- a keyed digest of the agent definition
    learned text not null,   -- JSON: {"choices": [...], "modelChoices": {model: [...]}, "images": bool or null, "contexts": {model: tokens}, "sums": [bytes, tokens]}
    updated real not null
)
"""
RATIO_CHANGE = 0.02  # a change of bytes per token smaller than this is not worth telling VS Code


@attrs.define
class Learned:
    choices: tuple[Choice, ...] = ()
    images: bool | None = None  # its `promptCapabilities.image`; None until one of its sessions said (agent_options.takes_images)
    contexts: dict[str, int] = attrs.Factory(dict)  # model value ("" for the agent's default) → context window
    sums: tuple[float, float] | None = None  # (bytes, tokens), see usage.add_sample
    version: str | None = None  # the `agentInfo.version` of its last start (cleaned)
    sign_in: bool | None = None  # whether it last wanted a sign-in before it would open a session
    commands: tuple[AgentCommand, ...] = ()  # its slash commands, as its latest session announced them
    # Model value → what a session offered once set to that model, where the options depend on the
    # model (Codex's efforts are those of its model); `choices` is what a new session offers.
    model_choices: dict[str, tuple[Choice, ...]] = attrs.Factory(dict)

    @property
    def bytes_per_token(self) -> float:
        return bytes_per_token(self.sums)

    def choices_for(self, model: str | None) -> tuple[Choice, ...]:
        """What the agent offers with `model` set (None: its own default model)."""
        return self.model_choices.get(model, self.choices) if model is not None else self.choices

    def to_json(self) -> str:
        return json.dumps(
            {
                "choices": choices_to_json(self.choices),
                "images": self.images,
                "contexts": self.contexts,
                "sums": list(self.sums) if self.sums else None,
                "version": self.version,
                "signIn": self.sign_in,
                "commands": [c.to_json() for c in self.commands],
                "modelChoices": {model: choices_to_json(choices) for model, choices in self.model_choices.items()},
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Learned:
        raw = json.loads(text)
        contexts = {str(k): v for k, v in (raw.get("contexts") or {}).items() if isinstance(v, int) and v > 0}
        sums = raw.get("sums")
        valid = isinstance(sums, list) and len(sums) == 2 and all(isinstance(x, (int, float)) and x >= 0 for x in sums)
        sums_read = (float(sums[0]), float(sums[1])) if valid else None
        images = raw.get("images")
        version, sign_in = shown_or_none(raw.get("version")), raw.get("signIn")
        choices = choices_from_json(raw.get("choices"))
        offered = {v.value for v in model_values(choices)}
        by_model = raw.get("modelChoices")
        model_choices = {k: choices_from_json(v) for k, v in by_model.items() if k in offered} if isinstance(by_model, dict) else {}
        return cls(
            choices, images if isinstance(images, bool) else None, contexts, sums_read,
            version, sign_in if isinstance(sign_in, bool) else None, commands_from_json(raw.get("commands")), model_choices,
        )


class AgentCatalog:
    def __init__(self, path: Path | str | None, key: bytes) -> None:
        self._key = key
        self._db: Database | None = None
        self._stored: dict[str, str] = {}  # digest → JSON, as read at start-up
        self._known: dict[str, Learned] = {}
        self._changed = trio.Event()
        if path is None:
            return
        self._db = open_store(path, self._setup, "what an agent offers", unable="not remembering what agents offer across restarts")

    def _setup(self, db: sqlite3.Connection) -> None:
        db.execute("pragma secure_delete = on")  # what is replaced is overwritten
        db.execute(SCHEMA)
        self._stored = dict(db.execute("select agent, learned from agents").fetchall())

    def close(self) -> None:
        """Let queued changes land, then close the file."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def _digest(self, agent: str) -> str:
        return hmac.new(self._key, b"agent-catalog\0" + agent.encode(), hashlib.sha256).hexdigest()

    def get(self, agent: str) -> Learned:
        """What is known of the agent definition (`agent_process.agent_key`)."""
        learned = self._known.get(agent)
        if learned is not None:
            return learned
        learned = Learned()
        stored = self._stored.pop(self._digest(agent), None)
        if stored is not None:
            try:
                learned = Learned.from_json(stored)
            except (ValueError, AttributeError, TypeError) as exc:
                log.warning("could not read what an agent offers: %s", exc)
        self._known[agent] = learned
        return learned

    def _save(self, agent: str, learned: Learned, *, tell: bool = True) -> None:
        self._known[agent] = learned
        if tell:
            self._changed.set()
        if self._db is not None:
            self._db.write("insert or replace into agents values (?, ?, ?)", (self._digest(agent), learned.to_json(), time.time()))

    def learn_session(self, agent: str, choices: tuple[Choice, ...], *, images: bool) -> None:
        """What a new session of the agent offered: its choices (with the agent's defaults as
        current), and whether its prompts take images."""
        learned = self.get(agent)
        if choices != learned.choices or images != learned.images:
            self._save(agent, attrs.evolve(learned, choices=choices, images=images))

    def learn_model(self, agent: str, model: str, choices: tuple[Choice, ...]) -> None:
        """What a session offered once set to `model`, one of the models the agent offers: that
        model's entry shows these (the model's own efforts, say), with the agent's values for it."""
        learned = self.get(agent)
        if model not in {v.value for v in model_values(learned.choices)} or learned.model_choices.get(model) == choices:
            return
        self._save(agent, attrs.evolve(learned, model_choices={**learned.model_choices, model: choices}))

    def learn_start(self, agent: str, *, version: str | None, sign_in: bool) -> None:
        """What the agent said as it started: its version, and whether it wants a sign-in first."""
        learned = self.get(agent)
        version = shown_or_none(version)
        if version != learned.version or sign_in != learned.sign_in:
            self._save(agent, attrs.evolve(learned, version=version, sign_in=sign_in))
    def learn_commands(self, agent: str, commands: tuple[AgentCommand, ...]) -> None:
        """The slash commands a session of the agent announced (`available_commands_update`): what
        the extension lists for the user (`lm/agentOptions`)."""
        learned = self.get(agent)
        if commands != learned.commands:
            # The model list shows none of them: VS Code is not told (lm/agentCommands is asked when wanted).
            self._save(agent, attrs.evolve(learned, commands=commands), tell=False)

    def learn_usage(self, agent: str, model: str | None, usage: TurnUsage) -> None:
        """A turn's usage with the agent, through model entry `model` (None: its plain entry)."""
        learned = self.get(agent)
        contexts, sums = learned.contexts, learned.sums
        if usage.size and contexts.get(model or "") != usage.size:
            contexts = {**contexts, model or "": usage.size}
        if usage.sample is not None:
            sums = add_sample(sums, usage.sample)
        if contexts is learned.contexts and sums == learned.sums:
            return
        # VS Code is told when what it shows changes: a context window, or bytes per token noticeably.
        tell = contexts is not learned.contexts or abs(bytes_per_token(sums) - learned.bytes_per_token) > RATIO_CHANGE * learned.bytes_per_token
        self._save(agent, attrs.evolve(learned, contexts=contexts, sums=sums), tell=tell)

    def continue_token(self, agent: str, session_id: str, cwd: str) -> str:
        """What a new chat carries to continue the agent's earlier session (see `continuing`)."""
        return continuing.encode(self._key, agent, session_id, cwd)

    def continued(self, agent: str, messages: tuple[Message, ...]) -> tuple[str, str] | None:
        """(session id, folder) of the earlier session a conversation's opening names, if it does."""
        return continuing.continued(self._key, agent, messages)

    async def wait_changed(self) -> None:
        """Returns once something was learned that changes the model list VS Code shows."""
        await self._changed.wait()
        self._changed = trio.Event()
