"""Every agent of the bundled catalogue distributed on npm or PyPI, installed for the tests at its catalogue
version by the extension's own installer (extension/src/agents/install.ts, compiled, run by node through
extension/src/test/installAgent.ts): what Add Agent does, not a copy of it. Into a cache outside the repo.

    python3 -m tests.support.catalogue_agents install [ID...]   install what is missing (parallel, bounded)
    python3 -m tests.support.catalogue_agents list               each agent's install state, as JSON lines

Stdlib only: `make agents` runs it with the system's python3, before any venv exists.

The list comes from `extension/catalogue/registry.json` (the catalogue users see), never from a hand
list. Each agent is installed into `${SYMPOSIUM_AGENTS_CACHE:-~/.cache/symposium-agents}/agents/<id>@<version>`
as Add Agent installs it under the extension's storage, and started with the command, arguments and
environment its install record names (`symposium-install.json`: what Add Agent writes into `symposium.agents`).

An agent that runs another program it does not bring (its prerequisite: an executable the user installs
first, as its README says) lists it under `requires` in tests/support/agents.toml, as data:
`requires = [{ npm = "package@version", bin = "name" }]`; it is `npm install`ed into the same cache, as its
user would install it (Add Agent does not), and its executables' folder (`bin_folder`) is what the agent's
entry puts on its PATH.

An install that fails leaves `<folder>.failed` (JSON: why, when, how long it took), which the tests read to
skip with that reason; it is tried again after RETRY_AFTER (or with SYMPOSIUM_AGENTS_RETRY=1). The whole
run is bounded: each install by INSTALL_TIMEOUT, all of them by SYMPOSIUM_AGENTS_BUDGET seconds (an install
not started by then is reported, and tried on the next run).
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TABLE = Path(__file__).resolve().parent / "agents.toml"  # what the suite knows of each agent, `requires` included

# SYMPOSIUM_TEST_CATALOGUE: another catalogue file, to try the suite on agents the bundled one does not list yet.
CATALOGUE = Path(os.environ.get("SYMPOSIUM_TEST_CATALOGUE") or ROOT / "extension" / "catalogue" / "registry.json")
INSTALL_TIMEOUT = 600  # seconds for one install (the biggest agents take two minutes here)
BUDGET = 1800  # seconds for all the installs of one run, by default
PARALLEL = 3  # installs at once: the time is the registry's downloads, not the 2 cores
RETRY_AFTER = 24 * 3600  # a failed install is tried again after this long
OVERRIDES = ROOT / "extension" / "catalogue" / "overrides.json"  # applied as Add Agent applies them
RECORD = "symposium-install.json"  # what the extension's installer writes last, beside what it installed
REQUIREMENT = ".requirement"  # written last in a requirement's folder


def fill(value: Any, **names: str) -> Any:
    """A value of agents.toml (`TABLE`) with `{api}`, `{home}`, `{command}` replaced (in strings, lists and tables)."""
    if isinstance(value, str):
        for name, text in names.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, list):
        return [fill(v, **names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, **names) for k, v in value.items()}
    return value


def cache() -> Path:
    base = os.environ.get("SYMPOSIUM_AGENTS_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "symposium-agents")
    return Path(base)


@dataclass(frozen=True)
class CatalogueAgent:
    """One npm or PyPI agent of the catalogue (or a program one runs, `requirement`), and where it is installed."""

    id: str
    name: str
    version: str
    kind: str  # "npm" or "pypi"
    spec: str  # what is installed: `name@version` (npm) or `name==version` (pip), as the docs' table shows it
    cmd: str | None = None  # a requirement's executable, which the agent runs
    requirement: bool = False

    @property
    def folder(self) -> Path:
        # Where the extension's installer puts it under its root (`<id>@<version>`), as Add Agent does.
        return cache() / "agents" / f"{self.id}@{self.version}"

    @property
    def failure_file(self) -> Path:
        return self.folder.with_name(self.folder.name + ".failed")

    def record(self) -> dict[str, Any] | None:
        """Its install record (what the installer wrote: command, args, env), once installed."""
        try:
            return json.loads((self.folder / RECORD).read_text())
        except (OSError, ValueError):
            return None

    def installed(self) -> bool:
        return (self.folder / REQUIREMENT).is_file() if self.requirement else self.record() is not None

    def failure(self) -> dict[str, Any] | None:
        """Why its last install failed (`reason`, `at`, `seconds`), if it did."""
        try:
            return json.loads(self.failure_file.read_text())
        except (OSError, ValueError):
            return None

    def command(self) -> list[str]:
        """How Add Agent starts it (command and arguments): its install record's."""
        record = self.record()
        assert record is not None, f"{self.id} is not installed"
        return [record["command"], *record["args"]]

    @property
    def env(self) -> dict[str, str]:
        """The environment its `symposium.agents` entry gets (the catalogue's, and what the installer adds)."""
        return dict((self.record() or {}).get("env") or {})

    @property
    def bin_folder(self) -> Path:
        """Where a requirement's executables are linked (what `npm install -g` puts on a user's PATH)."""
        return self.folder / "node_modules" / ".bin"


def requires(agent: CatalogueAgent, table: Path = TABLE) -> list[CatalogueAgent]:
    """The programs `agent` runs and does not bring, from agents.toml's `requires` (npm packages, each
    with the executable the agent runs), as installable packages of their own."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: no prerequisite known, the agent's own test says what is missing
        return []
    listed = tomllib.loads(table.read_text()).get(agent.id, {}).get("requires", [])
    found = []
    for need in listed:
        package, _, version = need["npm"].rpartition("@")
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", package.lstrip("@"))
        found.append(CatalogueAgent(f"{agent.id}-needs-{name}", need["bin"], version, "npm", need["npm"], need["bin"], requirement=True))
    return found


def load(catalogue: Path = CATALOGUE) -> list[CatalogueAgent]:
    """The catalogue's npm and PyPI agents, in its order (the installer reads the rest of each entry)."""
    data = json.loads(catalogue.read_text())
    agents = []
    for entry in data.get("agents", []):
        dist = entry.get("distribution") or {}
        if "npx" in dist:
            kind, package = "npm", dist["npx"]["package"]
            name, _, _ = package.rpartition("@")
            spec = package if name else f"{package}@{entry['version']}"
        elif "uvx" in dist:
            kind, package = "pypi", dist["uvx"]["package"]
            found = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:==|@)(\S+)$", package)
            spec = f"{found.group(1)}=={found.group(2)}" if found else f"{package}=={entry['version']}"
        else:
            continue
        agents.append(CatalogueAgent(entry["id"], entry.get("name", entry["id"]), entry.get("version", ""), kind, spec))
    return agents


class InstallError(Exception):
    pass


def _tail(text: str, lines: int = 4) -> str:
    kept = [line.strip() for line in text.strip().splitlines()
            if line.strip() and not line.startswith("npm warn") and not re.search(r"A complete log of this run|For help, visit|^npm error\s*$", line)]
    said = " | ".join(re.sub(r"^(npm error\s+)+", "", line) for line in kept[-lines:])
    said = re.sub(r"(ENOTFOUND|EAI_AGAIN|ECONNREFUSED)\s+\S+", r"\1 (its download host)", said)
    return re.sub(r"https?://\S+", "(an address outside the registry)", said)[-600:]  # no hosts in what we write down


_installer_lock = threading.Lock()


@functools.cache
def _built_installer() -> Path:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "install-agents.sh"), "--installer"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise InstallError(f"the extension's installer could not be built: {_tail(done.stderr)}")
    return Path(done.stdout.strip().splitlines()[-1])


def installer() -> Path:
    """The extension's installer as node runs it (built by scripts/install-agents.sh --installer when missing or older than its sources)."""
    with _installer_lock:
        return _built_installer()


def _install_agent(agent: CatalogueAgent, timeout: float) -> None:
    """Add Agent's install: the extension's installer, through node."""
    node = shutil.which("node")
    if not node:
        raise InstallError("node is needed to run the extension's installer")
    argv = [node, str(installer()), "--root", str(agent.folder.parent), "--catalogue", str(CATALOGUE), "--overrides", str(OVERRIDES), agent.id]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"the install did not finish in {timeout:.0f} s") from exc
    said = json.loads((done.stdout.strip().splitlines() or ["{}"])[-1] or "{}")
    if done.returncode != 0 or "error" in said:
        raise InstallError(_tail(f"{said.get('error', 'the installer failed')}" + (f": {said['detail']}" if said.get("detail") else ""), 3)
                           if said else f"the installer failed: {_tail(done.stderr)}")


def _install_requirement(need: CatalogueAgent, timeout: float) -> None:
    """A program an agent runs and does not bring, installed as its user would: `npm install --prefix`."""
    if not shutil.which("npm"):
        raise InstallError("npm is needed to install what the agent runs")
    staging = Path(tempfile.mkdtemp(prefix=".staging.", dir=need.folder.parent))
    try:
        done = subprocess.run(["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", need.spec],
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise InstallError(f"npm could not install {need.spec}: {_tail(done.stderr + done.stdout)}")
        (staging / REQUIREMENT).write_text(need.spec)
        shutil.rmtree(need.folder, ignore_errors=True)
        staging.rename(need.folder)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"npm did not finish in {timeout:.0f} s") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def install(agent: CatalogueAgent, timeout: float = INSTALL_TIMEOUT) -> tuple[bool, str, float]:
    """Install one agent (or one requirement) into its folder: (installed, what happened, seconds)."""
    start = time.monotonic()
    agent.folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        (_install_requirement if agent.requirement else _install_agent)(agent, timeout)
        if not agent.installed():
            raise InstallError("the installer said it installed it, and left no install record")
        agent.failure_file.unlink(missing_ok=True)
        return True, "installed", time.monotonic() - start
    except (InstallError, OSError, ValueError) as exc:
        seconds = time.monotonic() - start
        agent.failure_file.write_text(json.dumps({"reason": str(exc), "at": time.time(), "seconds": round(seconds, 1)}))
        return False, str(exc), seconds


def installed(id: str) -> CatalogueAgent | str:
    """The catalogue's agent `id`, installing it if need be (so a test run alone finds it on a clean machine);
    or why it cannot be had."""
    agent = next((a for a in load() if a.id == id), None)
    if agent is None:
        return f"the catalogue names no npm or PyPI agent {id}"
    if not agent.installed():
        ok, why, _ = install(agent)
        if not ok:
            return f"{agent.name} {agent.version} could not be installed: {why}"
    return agent


def installed_script(id: str) -> tuple[str, str] | str:
    """(node, the script it runs) of the catalogue's npm agent `id`, as its install record names them,
    installing it if need be; or why it cannot be had. For the drivers that start it themselves."""
    found = installed(id)
    if isinstance(found, str):
        return found
    command, *args = found.command()
    return (command, args[0]) if len(args) == 1 else f"{id} runs {command} with {len(args)} arguments, not one script"


def state(agent: CatalogueAgent) -> dict[str, Any]:
    """Where an agent stands: installed, or why not."""
    if agent.installed():
        return {"id": agent.id, "installed": True, "folder": str(agent.folder)}
    failed = agent.failure()
    return {"id": agent.id, "installed": False, "reason": failed["reason"] if failed else "not installed yet (make agents installs it)"}


def install_all(ids: list[str], budget: float) -> int:
    agents = load()
    chosen = [a for a in agents if not ids or a.id in ids]
    unknown = set(ids) - {a.id for a in agents}
    if unknown:
        print(f"install-agents: not npm/PyPI agents of the catalogue: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    retry = os.environ.get("SYMPOSIUM_AGENTS_RETRY") == "1"
    todo = []
    seen = set()
    for agent in [need for a in chosen for need in requires(a)] + chosen:
        failed = agent.failure()
        if agent.installed() or agent.folder in seen:
            continue
        seen.add(agent.folder)
        if failed and not retry and time.time() - failed.get("at", 0) < RETRY_AFTER:
            print(f"install-agents: {agent.id} {agent.spec}: failed before, not retried until a day has passed "
                  f"(SYMPOSIUM_AGENTS_RETRY=1 retries now): {failed['reason']}", file=sys.stderr)
            continue
        todo.append(agent)
    if not todo:
        return 0
    start = time.monotonic()
    results: dict[str, tuple[bool, str, float]] = {}

    def one(agent: CatalogueAgent) -> None:
        left = budget - (time.monotonic() - start)
        if left < 30:
            results[agent.id] = (False, "not tried: the install time budget ran out (tried on the next run)", 0.0)
            return
        print(f"install-agents: {agent.id}: {agent.spec} -> {agent.folder}", file=sys.stderr)
        results[agent.id] = install(agent, min(INSTALL_TIMEOUT, left))
        ok, what, seconds = results[agent.id]
        print(f"install-agents: {agent.id}: {'installed' if ok else 'FAILED: ' + what} in {seconds:.0f} s", file=sys.stderr)

    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(one, todo))
    failed = [a for a in todo if not results[a.id][0]]
    print(f"install-agents: {len(todo) - len(failed)} of {len(todo)} installed in {time.monotonic() - start:.0f} s"
          + (f"; not installed: {', '.join(a.id for a in failed)} (their tests skip, saying why)" if failed else ""), file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    command, *rest = argv or ["install"]
    if command == "install":
        return install_all(rest, float(os.environ.get("SYMPOSIUM_AGENTS_BUDGET", BUDGET)))
    if command == "list":
        for agent in load():
            print(json.dumps({**state(agent), "spec": agent.spec, "kind": agent.kind}))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
