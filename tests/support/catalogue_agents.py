"""Every agent of the bundled catalogue distributed on npm or PyPI, installed for the tests at its catalogue
version, the way Add Agent installs it (extension/src/agents/install.ts), into a cache outside the repo.

    python3 -m tests.support.catalogue_agents install [ID...]   install what is missing (parallel, bounded)
    python3 -m tests.support.catalogue_agents list               each agent's install state, as JSON lines

Stdlib only: `make agents` runs it with the system's python3, before any venv exists.

The list comes from `extension/catalogue/registry.json` (the catalogue users see), never from a hand
list: an npm agent (`distribution.npx`) is `npm install --prefix`ed into
`${SYMPOSIUM_AGENTS_CACHE:-~/.cache/symposium-agents}/<package>-<version>` and run with `node` on the
executable npx would pick (its `cmd`, its only bin, or the one named as the package); a PyPI agent
(`distribution.uvx`) gets a venv of its own there, from a python3 on PATH whose version the package accepts.

An agent that runs another program it does not bring (its prerequisite: an executable the user installs
first, as its README says) lists it under `requires` in tests/support/agents.toml, as data:
`requires = [{ npm = "package@version", bin = "name" }]`; it is installed into the same cache, the same way,
and its executables' folder (`bin_folder`) is what the agent's entry puts on its PATH.

An install that fails leaves `<folder>.failed` (JSON: why, when, how long it took), which the tests read to
skip with that reason; it is tried again after RETRY_AFTER (or with SYMPOSIUM_AGENTS_RETRY=1). The whole
run is bounded: each install by INSTALL_TIMEOUT, all of them by SYMPOSIUM_AGENTS_BUDGET seconds (an install
not started by then is reported, and tried on the next run).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
INSTALLED = ".installed"  # written last in a finished install folder (as scripts/install-agents.sh does)


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
    """One npm or PyPI agent of the catalogue, as Add Agent would install and run it."""

    id: str
    name: str
    version: str
    kind: str  # "npm" or "pypi"
    package: str  # the package's name, without its version
    spec: str  # what is installed: `name@version` (npm) or `name==version` (pip)
    cmd: str | None  # the executable the entry names, if any
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict, hash=False)

    @property
    def folder(self) -> Path:
        # The package's name without its scope (as scripts/install-agents.sh names its folders, so an
        # agent both install is installed once), its scope after it when a scope's name alone is vague.
        scope, _, unscoped = self.package.rpartition("/")
        version = self.spec.rsplit("==" if self.kind == "pypi" else "@", 1)[-1]
        if scope and unscoped in ("cli", "agent", "acp", "core"):
            unscoped = f"{scope.lstrip('@')}-{unscoped}"
        return cache() / (f"{unscoped}-{version}" if self.kind == "npm" else f"pypi-{unscoped}-{version}")

    @property
    def failure_file(self) -> Path:
        return self.folder.with_name(self.folder.name + ".failed")

    def installed(self) -> bool:
        return (self.folder / INSTALLED).is_file()

    def failure(self) -> dict[str, Any] | None:
        """Why its last install failed (`reason`, `at`, `seconds`), if it did."""
        try:
            return json.loads(self.failure_file.read_text())
        except (OSError, ValueError):
            return None

    def command(self) -> list[str]:
        """How Add Agent would start it (command and arguments), once installed."""
        if self.kind == "npm":
            package_dir = self.folder / "node_modules" / self.package
            script = package_dir / bin_script(package_dir, self.package, self.cmd)
            if is_javascript(script):
                return [shutil.which("node") or "node", str(script), *self.args]
            return [str(script), *self.args]  # a native executable (or a script for another interpreter)
        return [str(self.folder / "venv" / "bin" / venv_script(self.folder / "venv", self.package, self.cmd)), *self.args]

    @property
    def bin_folder(self) -> Path:
        """Where its executables are linked (what `npm install -g` puts on a user's PATH)."""
        return self.folder / "node_modules" / ".bin" if self.kind == "npm" else self.folder / "venv" / "bin"


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
        found.append(CatalogueAgent(f"{agent.id} needs {need['bin']}", need["bin"], version, "npm", package, need["npm"], need["bin"], ()))
    return found


def load(catalogue: Path = CATALOGUE) -> list[CatalogueAgent]:
    """The catalogue's npm and PyPI agents, in its order."""
    data = json.loads(catalogue.read_text())
    agents = []
    for entry in data.get("agents", []):
        dist = entry.get("distribution") or {}
        if "npx" in dist:
            kind, how = "npm", dist["npx"]
            package, _, version = how["package"].rpartition("@")
            if not package:  # no version in the spec
                package, version = how["package"], entry["version"]
            spec = f"{package}@{version}"
        elif "uvx" in dist:
            kind, how = "pypi", dist["uvx"]
            found = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:==|@)(\S+)$", how["package"])
            package, version = (found.group(1), found.group(2)) if found else (how["package"], entry["version"])
            spec = f"{package}=={version}"
        else:
            continue
        agents.append(CatalogueAgent(entry["id"], entry.get("name", entry["id"]), entry.get("version", ""), kind, package, spec,
                                     how.get("cmd"), tuple(how.get("args") or ()), dict(how.get("env") or {})))
    return agents


class InstallError(Exception):
    pass


def bin_script(package_dir: Path, name: str, cmd: str | None) -> str:
    """The package's executable as npx picks it: `cmd`, its only bin, or the one named as the package
    (extension/src/agents/install.ts, binScript), relative to the package; a file inside it."""
    manifest = json.loads((package_dir / "package.json").read_text())
    bins = manifest.get("bin") or {}
    if isinstance(bins, str):
        bins = {name.rsplit("/", 1)[-1]: bins}
    unscoped = name.rsplit("/", 1)[-1]
    chosen = bins.get(cmd) if cmd else (next(iter(bins.values())) if len(bins) == 1 else bins.get(unscoped))
    if not isinstance(chosen, str):
        raise InstallError(f"{name} has {'executables ' + ', '.join(bins) + ' and none named ' + (cmd or unscoped) if bins else 'no executable'}")
    real = (package_dir / chosen).resolve()
    if not real.is_file() or package_dir.resolve() not in real.parents:
        raise InstallError(f"{name}'s executable {chosen!r} is not a file inside the package")
    return os.path.relpath(package_dir / chosen, package_dir)


def is_javascript(path: Path) -> bool:
    """Whether `node` runs this bin: a script without a `#!` line, or one naming node. npm also links
    native executables and scripts for other interpreters as bins; those run as they are."""
    with open(path, "rb") as file:
        head = file.read(128)
    if head.startswith(b"\x7fELF") or head.startswith(b"MZ") or head[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return False
    if head.startswith(b"#!"):
        return b"node" in head.split(b"\n", 1)[0]
    return True


SCRIPTS = """
import importlib.metadata as m, json, re, sys
want = re.sub(r"[-_.]+", "-", sys.argv[1]).lower()
for d in m.distributions():
    if re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() == want:
        print(json.dumps([e.name for e in d.entry_points if e.group == "console_scripts"]))
        break
else:
    print("null")
"""


def venv_script(venv: Path, name: str, cmd: str | None) -> str:
    """The executable uvx runs: `cmd`, the one named as the package, else its only one."""
    if cmd:
        return cmd
    listed = subprocess.run([str(venv / "bin" / "python"), "-c", SCRIPTS, name], capture_output=True, text=True, timeout=60)
    scripts = json.loads(listed.stdout.strip() or "null") or []
    norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()  # noqa: E731
    chosen = next((s for s in scripts if norm(s) == norm(name)), scripts[0] if len(scripts) == 1 else None)
    if chosen is None:
        raise InstallError(f"{name} has {'executables ' + ', '.join(scripts) + ' and none named ' + name if scripts else 'no executable'}")
    return chosen


def _tail(text: str, lines: int = 4) -> str:
    kept = [line.strip() for line in text.strip().splitlines()
            if line.strip() and not line.startswith("npm warn") and not re.search(r"A complete log of this run|For help, visit|^npm error\s*$", line)]
    said = " | ".join(re.sub(r"^(npm error\s+)+", "", line) for line in kept[-lines:])
    said = re.sub(r"(ENOTFOUND|EAI_AGAIN|ECONNREFUSED)\s+\S+", r"\1 (its download host)", said)
    return re.sub(r"https?://\S+", "(an address outside the registry)", said)[-600:]  # no hosts in what we write down


def _run(argv: list[str], timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"{argv[0]} did not finish in {timeout:.0f} s") from exc


def _install_npm(agent: CatalogueAgent, staging: Path, timeout: float) -> None:
    if not shutil.which("npm") or not shutil.which("node"):
        raise InstallError("node and npm are needed to install an npm agent")
    # As Add Agent does (no --engine-strict: npm warns on an engine it does not match, and installs).
    done = _run(["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", "--omit=dev", agent.spec], timeout)
    if done.returncode != 0:
        output = done.stderr + done.stdout
        script = re.search(r"npm error path \S*node_modules/(\S+)\s+npm error command failed\s+npm error command sh -c (.*)", output)
        if script:  # an install script (postinstall...) failed: whatever it said is its own
            raise InstallError(f"{agent.spec}: the install script of {script.group(1)} (`{script.group(2).strip()}`) failed: {_tail(output.split('npm error command sh -c', 1)[1], 3)}")
        if "ETARGET" in output or "No matching version" in output:
            raise InstallError(f"{agent.spec} is not on the npm registry here (ETARGET)")
        if "E404" in output:
            missing = re.search(r"404 Not Found - GET \S+?/((?:@[^/\s]+/|@[^%\s]+%2[fF])?[^/\s]+)\s", output)
            name = missing.group(1).replace("%2f", "/").replace("%2F", "/") if missing else agent.package
            raise InstallError(f"{name} is not on the npm registry here (E404)" + ("" if name == agent.package else f", needed by {agent.spec}"))
        raise InstallError(f"npm could not install {agent.spec}: {_tail(output)}")
    bin_script(staging / "node_modules" / agent.package, agent.package, agent.cmd)


def requires_python(agent: CatalogueAgent, timeout: float) -> str | None:
    """The package's Requires-Python, from the registry's metadata as pip sees it (None if it says none)."""
    with tempfile.TemporaryDirectory() as scratch:
        done = _run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check", "-d", scratch,
                     "--python-version", "3.13", "--only-binary=:all:", agent.spec], timeout)
        for wheel in Path(scratch).glob("*.whl"):
            import zipfile

            with zipfile.ZipFile(wheel) as archive:
                metadata = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
                if metadata:
                    found = re.search(r"^Requires-Python:\s*(.+)$", archive.read(metadata).decode(errors="replace"), re.M)
                    return found.group(1).strip() if found else None
        if done.returncode != 0:
            raise InstallError(f"{agent.spec} is not on PyPI here: {_tail(done.stderr + done.stdout, 2)}")
    return None


def _accepts(requirement: str | None, version: tuple[int, int]) -> bool:
    """Whether a Requires-Python of the usual forms (>=, >, <, <=, ==X.Y.*, !=, comma-joined) accepts X.Y."""
    if not requirement:
        return True
    for clause in requirement.split(","):
        found = re.match(r"\s*(>=|<=|==|!=|~=|>|<)\s*(\d+)(?:\.(\d+))?", clause)
        if not found:
            continue
        op, want = found.group(1), (int(found.group(2)), int(found.group(3) or 0))
        ok = {">=": version >= want, ">": version > want, "<": version < want, "<=": version <= want,
              "==": version == want, "!=": version != want, "~=": version >= want}[op]
        if not ok:
            return False
    return True


def pythons() -> list[tuple[tuple[int, int], str]]:
    """The python3 interpreters on PATH, newest first, with their versions."""
    found: dict[tuple[int, int], str] = {}
    for name in ("python3.14", "python3.13", "python3.12", "python3.11", "python3.10", "python3"):
        path = shutil.which(name)
        if not path:
            continue
        done = subprocess.run([path, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True)
        if done.returncode == 0:
            major, minor = map(int, done.stdout.split())
            found.setdefault((major, minor), path)
    return sorted(found.items(), reverse=True)


def _install_pypi(agent: CatalogueAgent, staging: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    wanted = requires_python(agent, timeout)
    usable = [path for version, path in pythons() if _accepts(wanted, version)]
    if not usable:
        have = ", ".join(f"{v[0]}.{v[1]}" for v, _ in pythons()) or "none"
        raise InstallError(f"{agent.spec} needs Python {wanted}; this machine has {have}")
    venv = staging / "venv"
    done = _run([usable[0], "-m", "venv", str(venv)], 120)
    if done.returncode != 0:
        raise InstallError(f"no venv: {_tail(done.stderr)}")
    done = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", agent.spec],
                max(30.0, deadline - time.monotonic()))
    if done.returncode != 0:
        raise InstallError(f"pip could not install {agent.spec}: {_tail(done.stderr + done.stdout)}")
    venv_script(venv, agent.package, agent.cmd)


def install(agent: CatalogueAgent, timeout: float = INSTALL_TIMEOUT) -> tuple[bool, str, float]:
    """Install one agent into its folder: (installed, what happened, seconds)."""
    start = time.monotonic()
    dest = agent.folder
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging.", dir=dest.parent))
    try:
        if agent.kind == "npm":
            _install_npm(agent, staging, timeout)
        else:
            # A venv is built in place (its scripts name its own path), as Add Agent builds it.
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir()
            _install_pypi(agent, dest, timeout)
            (dest / INSTALLED).touch()
            agent.failure_file.unlink(missing_ok=True)
            return True, "installed", time.monotonic() - start
        staging.chmod(0o755)
        (staging / INSTALLED).touch()
        if not agent.installed():
            shutil.rmtree(dest, ignore_errors=True)
            staging.rename(dest)
        agent.failure_file.unlink(missing_ok=True)
        return True, "installed", time.monotonic() - start
    except (InstallError, OSError, ValueError) as exc:
        seconds = time.monotonic() - start
        if agent.kind == "pypi":
            shutil.rmtree(dest, ignore_errors=True)
        agent.failure_file.write_text(json.dumps({"reason": str(exc), "at": time.time(), "seconds": round(seconds, 1)}))
        return False, str(exc), seconds
    finally:
        shutil.rmtree(staging, ignore_errors=True)


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
