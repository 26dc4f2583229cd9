#!/usr/bin/env python3
"""Builds extension/catalogue/registry.json, the agent catalogue shipped in the extension, from the
ACP registry (github.com/agentclientprotocol/registry) and our overrides (docs/usage.md, "The
catalogue"):

    python3 extension/scripts/catalogue.py [SOURCE] [--no-check] > extension/catalogue/registry.json

SOURCE is the registry's published registry.json (a URL, the default being the registry's CDN, or a
file), or a checkout of the registry's repository, or its bare git directory (every `<id>/agent.json`
of its HEAD, aggregated as the registry's own build does: icons as CDN URLs).

Then, in order:
1. An entry that lists an older version than the catalogue shipped before (extension/catalogue/registry.json)
   is replaced by that one, unless the registry marks it `"downgrade": true` (`neverOlder` in
   extension/src/agents/registry.ts), and noted.
2. extension/catalogue/overrides.json is applied, as the extension applies it at run time to a
   registry it refreshes from (`applyOverrides` in extension/src/agents/registry.ts): `remove`
   drops ids; an entry of `agents` replaces the registry's entry of the same id while the
   registry's version is not newer (and is added when the registry has none: here only, not at run time); `patch` replaces an
   agent's `args` and adds to its `env` in every distribution it has.
3. Every npm and PyPI pin is checked against the registry this machine installs from (`npm view`,
   PyPI's JSON API). A pinned version that does not exist there is resolved to one that does (the
   nearest newer release of the same major version, for 0.x of the same minor; else the nearest
   older one; else the newest) and noted; a package the registry does not have at all is noted.
4. Each binary target without a published sha256 is downloaded, when it can be, and the sha256
   computed here is recorded as `recordedSha256` (the extension checks it, and tells the user a
   binary with neither is unverified). A target that cannot be downloaded records nothing.
5. A package or download that installs another version than its entry's `version` (a resolved pin's
   old binaries, say), or whichever is newest (no pin), is dropped, and noted; an entry with nothing
   left is dropped (`parseRegistry` in extension/src/agents/registry.ts refuses the same at run time).
6. The npm packages with install scripts are listed; those not in overrides' `npmScripts` are
   installed with `--ignore-scripts`.

What was resolved, recorded or could not be checked goes to stderr and to the `built` field.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

CDN = "https://cdn.agentclientprotocol.com/registry/v1/latest"
PUBLISHED = f"{CDN}/registry.json"
HERE = Path(__file__).resolve().parent.parent / "catalogue"
OVERRIDES = HERE / "overrides.json"
SHIPPED = HERE / "registry.json"
DOWNLOAD_TIMEOUT = 30
DOWNLOAD_MAX = 512 * 1024 * 1024

notes: list[str] = []


def note(text: str) -> None:
    notes.append(text)
    print(f"catalogue: {text}", file=sys.stderr)


# The registry --------------------------------------------------------------------------------------

def entry(folder: Path) -> dict:
    agent = json.loads((folder / "agent.json").read_text())
    agent.pop("icon", None)
    if (folder / "icon.svg").exists():
        agent["icon"] = f"{CDN}/{agent['id']}.svg"
    return agent


def git_entries(git_dir: Path) -> list[dict]:
    def git(*args: str) -> str:
        return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True).stdout

    files = set(git("ls-tree", "-r", "--name-only", "HEAD").splitlines())
    agents = []
    for name in sorted(files):
        folder, _, leaf = name.partition("/")
        if leaf != "agent.json" or folder.startswith((".", "_")):
            continue
        agent = json.loads(git("show", f"HEAD:{name}"))
        agent.pop("icon", None)
        if f"{folder}/icon.svg" in files:
            agent["icon"] = f"{CDN}/{agent['id']}.svg"
        agents.append(agent)
    return agents


def read_source(source: str) -> tuple[list[dict], str]:
    path = Path(source)
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        commit = subprocess.run(["git", f"--git-dir={path}", "log", "-1", "--format=%h %cs"], capture_output=True, text=True).stdout.strip()
        return git_entries(path), f"git {path.name} at {commit}"
    if path.is_dir():
        agents = [
            entry(folder)
            for folder in sorted(path.iterdir())
            if folder.is_dir() and not folder.name.startswith((".", "_")) and (folder / "agent.json").exists()
        ]
        return agents, f"checkout {path}"
    if path.is_file():
        return json.loads(path.read_text())["agents"], f"file {path.name}"
    with urllib.request.urlopen(source, timeout=DOWNLOAD_TIMEOUT) as answer:
        return json.loads(answer.read(16 * 1024 * 1024))["agents"], source


# Overrides and the versions (mirror extension/src/agents/registry.ts) --------------------------

def semver(version: str) -> tuple:
    """A sortable key: numeric parts compared as numbers, a pre-release before its release."""
    core, _, pre = version.partition("+")[0].partition("-")
    nums = tuple(int(p) if p.isdigit() else 0 for p in core.split("."))
    nums = nums + (0,) * (3 - len(nums))
    tail = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
    return nums + ((1,) if not pre else (0,) + tail,)


def apply_overrides(agents: list[dict], overrides: dict) -> list[dict]:
    by_id = {a["id"]: a for a in agents}
    for removed in overrides.get("remove", []):
        by_id.pop(removed, None)
    for agent in overrides.get("agents", []):
        theirs = by_id.get(agent["id"])
        if theirs is None or semver(theirs["version"]) <= semver(agent["version"]):
            by_id[agent["id"]] = json.loads(json.dumps(agent))
    for agent_id, patch in overrides.get("patch", {}).items():
        agent = by_id.get(agent_id)
        if not agent:
            continue
        dist = agent.get("distribution", {})
        targets = [dist[k] for k in ("npx", "uvx") if k in dist] + list(dist.get("binary", {}).values())
        for target in targets:
            if "args" in patch:
                target["args"] = list(patch["args"])
            if patch.get("env"):
                target["env"] = {**target.get("env", {}), **patch["env"]}
    return sorted(by_id.values(), key=lambda a: a["name"].lower())


DOWNGRADE = "downgrade"


def never_older(agents: list[dict], previous: list[dict]) -> list[dict]:
    """`agents`, each listed older than in `previous` (the catalogue shipped before) replaced by that
    one, unless the registry marks it a downgrade (`neverOlder` in extension/src/agents/registry.ts)."""
    before = {a.get("id"): a for a in previous if isinstance(a.get("version"), str)}
    kept = []
    for agent in agents:
        floor = before.get(agent.get("id"))
        if not floor or not isinstance(agent.get("version"), str) or semver(agent["version"]) >= semver(floor["version"]):
            kept.append(agent)
        elif agent.get(DOWNGRADE) is True:
            note(f"{agent['id']}: the registry marks {agent['version']} as a downgrade from {floor['version']} (shipped before): {agent['version']} taken")
            kept.append(agent)
        else:
            note(f"{agent['id']}: the registry lists {agent['version']}, older than {floor['version']} (shipped before): {floor['version']} kept")
            kept.append(json.loads(json.dumps(floor)))
    return kept


_LOCATION = re.compile(r"^(https?:|file:|/|\.|[A-Za-z]:[\\/])|\.(tgz|tar\.gz|whl|zip)$")
_EXACT = {
    "npx": re.compile(r"^v?\d+(\.\d+)*(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"),
    "uvx": re.compile(r"^v?\d+(\.\d+)*((a|b|rc|\.?post|\.?dev)\d*)*(\+[0-9A-Za-z.]+)?$", re.I),
}
_NAMED = re.compile(r"(?<![0-9A-Za-z.])v?(\d+(?:\.\d+)+)(?!\.?\d)")


def same_version(a: str, b: str) -> bool:
    return a == b or semver(a.lstrip("vV")) == semver(b.lstrip("vV"))


def location_version(location: str, expected: str) -> str:
    """The version a download's path names: `expected` when it names it, else the first it names;
    "" when it names none (`locationVersion` in extension/src/agents/registry.ts)."""
    where = urllib.parse.urlparse(location).path if re.match(r"^[a-z]+:", location) else location
    named = _NAMED.findall(where)
    if not named:
        return ""
    bare = expected.lstrip("vV").partition("+")[0]
    return expected if any(same_version(v, expected) for v in named) or (bare and bare in where) else named[0]


def pinned_version(kind: str, spec: str, expected: str) -> str | None:
    """The version a package spec installs; None when it installs whichever is newest."""
    if _LOCATION.search(spec):
        return location_version(spec, expected)
    if kind == "npx":
        match = re.fullmatch(r"(?:@[^/@\s]+/[^@\s]+|[^@\s]+)@(\S+)", spec)
    else:
        match = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?(?:==|@)(\S+)", spec)
    return match[1] if match and _EXACT[kind].match(match[1]) else None


def agreeing(agents: list[dict]) -> list[dict]:
    """Each agent with only the packages and downloads that install its `version`; one with none
    left is dropped. Each drop is noted (`parseRegistry` in extension/src/agents/registry.ts)."""
    kept = []
    for agent in agents:
        version, dist = agent.get("version", ""), agent.get("distribution", {})

        def agrees(how: str, installs: str | None, what: str) -> bool:
            if installs is None:
                note(f"{agent['id']}: its {how} {what} is not pinned to one version: dropped")
            elif installs and not same_version(installs, version):
                note(f"{agent['id']}: it says version {version}, but its {how} {what} installs {installs}: dropped")
            return installs == "" or (installs is not None and same_version(installs, version))

        for kind, how in (("npx", "npm package"), ("uvx", "PyPI package")):
            if kind in dist and not agrees(how, pinned_version(kind, dist[kind].get("package", ""), version), dist[kind].get("package", "")):
                del dist[kind]
        for platform, target in list(dist.get("binary", {}).items()):
            if not agrees(f"{platform} download", location_version(target.get("archive", ""), version), target.get("archive", "")):
                del dist["binary"][platform]
        if "binary" in dist and not dist["binary"]:
            del dist["binary"]
        if any(k in dist for k in ("npx", "uvx", "binary")):
            kept.append(agent)
        else:
            note(f"{agent['id']}: no distribution that installs {version}: dropped")
    return kept


# npm and PyPI --------------------------------------------------------------------------------------

def npm_spec(spec: str) -> tuple[str, str] | None:
    match = re.fullmatch(r"(@?[^@\s]+)@([^@\s]+)", spec)
    return (match[1], match[2]) if match else None


def pypi_spec(spec: str) -> tuple[str, str] | None:
    match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(?:==|@)([^=@\s]+)", spec)
    return (match[1], match[2]) if match else None


def nearest(pin: str, published: list[str]) -> str:
    """The version to use when `pin` is not published (the rule in this module's docstring)."""
    releases = [v for v in published if "-" not in v] or published
    key = semver(pin)
    same = [v for v in releases if semver(v)[0] == key[0] and (key[0] != 0 or semver(v)[1] == key[1])]
    newer = sorted((v for v in same if semver(v) > key), key=semver)
    older = sorted((v for v in same if semver(v) < key), key=semver)
    return newer[0] if newer else older[-1] if older else max(releases, key=semver)


def npm_versions(name: str) -> list[str] | None:
    done = subprocess.run(["npm", "view", name, "versions", "--json"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return None
    versions = json.loads(done.stdout or "[]")
    return [versions] if isinstance(versions, str) else versions


def npm_install_scripts(name: str, version: str) -> dict:
    done = subprocess.run(["npm", "view", f"{name}@{version}", "scripts", "--json"], capture_output=True, text=True, timeout=120)
    scripts = json.loads(done.stdout or "{}") if done.returncode == 0 else {}
    return {k: v for k, v in (scripts or {}).items() if k in ("preinstall", "install", "postinstall")}


def pypi_versions(name: str) -> list[str] | None:
    try:
        with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=DOWNLOAD_TIMEOUT) as answer:
            return list(json.loads(answer.read())["releases"])
    except (urllib.error.URLError, OSError, ValueError):
        return None


def check_packages(agents: list[dict], overrides: dict) -> None:
    for agent in agents:
        dist = agent["distribution"]
        for kind, parse, versions_of, join in (
            ("npx", npm_spec, npm_versions, lambda n, v: f"{n}@{v}"),
            ("uvx", pypi_spec, pypi_versions, lambda n, v: f"{n}=={v}"),
        ):
            if kind not in dist:
                continue
            parsed = parse(dist[kind]["package"])
            if not parsed:
                note(f"{agent['id']}: {dist[kind]['package']} is not a pinned package; not checked")
                continue
            name, pin = parsed
            published = versions_of(name)
            registry = "npm" if kind == "npx" else "PyPI"
            if published is None:
                note(f"{agent['id']}: {name} is not on the {registry} registry reachable here; kept as the ACP registry lists it, not checked")
                continue
            if pin not in published:
                chosen = nearest(pin, published)
                note(f"{agent['id']}: {name} {pin} is not on {registry} (ETARGET); resolved to {chosen}")
                dist[kind]["package"] = join(name, chosen)
                agent["version"] = chosen  # what an install gets: packages come before binaries
                pin = chosen
            if kind == "npx":
                scripts = npm_install_scripts(name, pin)
                if scripts:
                    allowed = name in overrides.get("npmScripts", {})
                    note(f"{agent['id']}: {name}@{pin} has install scripts {scripts}; "
                         + ("run (overrides' npmScripts)" if allowed else "installed with --ignore-scripts"))


# Binaries ------------------------------------------------------------------------------------------

def record_hashes(agents: list[dict], previous: dict[str, str]) -> None:
    missed = 0
    for agent in agents:
        for platform, target in agent["distribution"].get("binary", {}).items():
            if target.get("sha256"):
                continue
            url = target["archive"]
            if url in previous:
                target["recordedSha256"] = previous[url]
                continue
            try:
                digest = hashlib.sha256()
                size = 0
                with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as answer:
                    while chunk := answer.read(1 << 20):
                        size += len(chunk)
                        if size > DOWNLOAD_MAX:
                            raise OSError("larger than 512 MiB")
                        digest.update(chunk)
                target["recordedSha256"] = digest.hexdigest()
                note(f"{agent['id']} {platform}: recorded sha256 {target['recordedSha256']}")
            except (urllib.error.URLError, OSError, ValueError) as error:
                missed += 1
                print(f"catalogue: {agent['id']} {platform}: {url} not downloaded ({error}); no sha256 recorded", file=sys.stderr)
    if missed:
        note(f"{missed} binary targets have no published sha256 and could not be downloaded to record one: the extension calls them unverified")


def previous() -> list[dict]:
    """The agents of the catalogue shipped before this build, if it can be read."""
    try:
        return json.loads(SHIPPED.read_text()).get("agents", [])
    except (OSError, ValueError, AttributeError):
        return []


def previous_hashes(shipped: list[dict]) -> dict[str, str]:
    return {
        target["archive"]: target["recordedSha256"]
        for agent in shipped
        for target in agent.get("distribution", {}).get("binary", {}).values()
        if target.get("recordedSha256")
    }


def main(argv: list[str]) -> None:
    check = "--no-check" not in argv
    sources = [a for a in argv if not a.startswith("--")]
    source = sources[0] if sources else PUBLISHED
    overrides = json.loads(OVERRIDES.read_text())
    registry_agents, origin = read_source(source)
    before = previous()
    agents = apply_overrides(never_older(registry_agents, before), overrides)
    if check:
        check_packages(agents, overrides)
    agents = agreeing(agents)
    if check:
        record_hashes(agents, previous_hashes(before))
    built = {
        "from": origin,
        "date": datetime.date.today().isoformat(),
        "checked": "npm and PyPI pins checked against the registries reachable at build time" if check else "not checked",
        "notes": notes,
    }
    registry = {"version": "1.0.0", "agents": agents, "extensions": [], "built": built}
    json.dump(registry, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
