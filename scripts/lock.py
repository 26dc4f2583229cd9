"""`make lock`: requirements.txt, the backend's dependencies as the extension's private venv installs them.

Every package the backend needs, at one exact version, with the sha256 of every file PyPI has for that release
(each wheel and the sdist), and an environment marker where a package is needed on some platforms only (pywin32
on Windows): one file for every platform and Python the extension supports (docs/reliability.md, "What the
extension installs"). It is checked in; `make vsix` and `make test` put it beside the backend's wheel, and the
extension installs it with `pip install --require-hashes --only-binary :all: -r requirements.txt`, then the wheel
alone (`--no-deps`).

Resolved by uv (`uv pip compile --universal --generate-hashes`, a pinned uv installed once into a cache folder
from PyPI), then checked against PyPI's own list of each release's files: the hashes are all of them, and every
platform below has a wheel of every package it needs, so no install ever builds (runs) an sdist.

    .venv/bin/python scripts/lock.py            resolve again and write requirements.txt (checked against PyPI)
    .venv/bin/python scripts/lock.py --check    the checked-in one agrees with pyproject.toml (offline; the build runs it)
    .venv/bin/python scripts/lock.py --pypi     the checked-in one agrees with pyproject.toml and PyPI, write nothing
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.tags import compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.txt"
UV_VERSION = "0.13.8"
PYPI = "https://pypi.org/pypi"
HEADER = """\
# The backend's dependencies, exact, with the sha256 of every file of each release: what the extension's
# private venv installs (pip install --require-hashes --only-binary :all: -r requirements.txt, then the
# backend's wheel with --no-deps). Generated from pyproject.toml by `make lock` (scripts/lock.py); do not edit.
"""

# What the extension supports: CPython 3.11 to 3.14 on these systems (docs/reliability.md). Not macOS on
# Intel nor Windows on Arm: cryptography (mcp needs it, through pyjwt[crypto]) publishes no wheel for them
# (for Intel Macs none since 46.0.4), and an install never builds one from source.
PYTHONS = [(3, 11), (3, 12), (3, 13), (3, 14)]
MANYLINUX = [f"manylinux_2_{minor}" for minor in range(28, 4, -1)] + ["manylinux2014", "manylinux2010", "manylinux1"]
PLATFORMS: dict[str, tuple[dict[str, str], list[str]]] = {
    "linux-x86_64": ({"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64"}, [f"{m}_x86_64" for m in MANYLINUX]),
    "linux-aarch64": ({"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "aarch64"}, [f"{m}_aarch64" for m in MANYLINUX]),
    "macos-arm64": ({"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "arm64"}, list(mac_platforms((11, 0), "arm64"))),
    "windows-amd64": ({"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt", "platform_machine": "AMD64"}, ["win_amd64"]),
}


@dataclass
class Pin:
    name: str  # canonical
    version: str
    marker: Marker | None
    hashes: set[str] = field(default_factory=set)


LINE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)\s*(?:;\s*(?P<marker>[^\\]+?))?\s*$")


def parse(text: str) -> list[Pin]:
    """The pins of a hashed requirements file (`name==version ; marker \\ --hash=sha256:… …`)."""
    pins: list[Pin] = []
    logical = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    for line in logical.splitlines():
        if not line.strip():
            continue
        head, *options = re.split(r"\s+(?=--)", line.strip())
        match = LINE.match(head)
        if not match:
            raise ValueError(f"not an exact pin: {line.strip()[:120]}")
        hashes = {option.removeprefix("--hash=sha256:") for option in options if option.startswith("--hash=sha256:")}
        if len(hashes) != len(options):
            raise ValueError(f"{match['name']}: an option other than --hash=sha256: {options}")
        marker = Marker(match["marker"]) if match["marker"] else None
        pins.append(Pin(canonicalize_name(match["name"]), match["version"], marker, hashes))
    return pins


def environments():
    """(name, marker environment, supported wheel tags) for each Python and platform the extension supports."""
    for platform, (markers, platform_tags) in PLATFORMS.items():
        for major, minor in PYTHONS:
            env = {
                **markers,
                "python_version": f"{major}.{minor}",
                "python_full_version": f"{major}.{minor}.0",
                "implementation_name": "cpython",
                "platform_python_implementation": "CPython",
                "platform_release": "",
                "platform_version": "",
                "implementation_version": f"{major}.{minor}.0",
            }
            tags = set(cpython_tags((major, minor), platforms=platform_tags)) | set(compatible_tags((major, minor), f"cp{major}{minor}", platform_tags))
            yield f"cp{major}{minor}-{platform}", env, tags


def release_files(name: str, version: str) -> list[dict]:
    """PyPI's files of one release (its JSON API; the per-release address first, the project's as a fallback)."""
    for url, pick in ((f"{PYPI}/{name}/{version}/json", lambda d: d["urls"]), (f"{PYPI}/{name}/json", lambda d: d["releases"][version])):
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                return pick(json.load(response))
        except (OSError, KeyError):
            continue
    raise SystemExit(f"lock: PyPI has no release {name} {version} (or could not be reached)")


def check(pins: list[Pin]) -> list[str]:
    """What is wrong with the lock against PyPI: a file whose hash it lacks (or a hash of no file), and a
    supported platform with no wheel of a package it needs."""
    problems = []
    for pin in pins:
        files = [f for f in release_files(pin.name, pin.version) if not f.get("yanked")]
        published = {f["digests"]["sha256"] for f in files}
        if pin.hashes != published:
            problems.append(f"{pin.name} {pin.version}: {len(published - pin.hashes)} file(s) of PyPI's not hashed, {len(pin.hashes - published)} hash(es) of no file")
        wheels = [parse_wheel_filename(f["filename"])[3] for f in files if f["filename"].endswith(".whl")]
        for name, env, tags in environments():
            if pin.marker is not None and not pin.marker.evaluate(env):
                continue
            if not any(tags & set(wheel_tags) for wheel_tags in wheels):
                problems.append(f"{pin.name} {pin.version}: no wheel for {name}")
    return problems


def check_direct(pins: list[Pin]) -> list[str]:
    """What is wrong with the lock against pyproject.toml: a dependency missing or pinned outside its range;
    and in itself: a package pinned twice for one platform, or without a hash."""
    pinned = {pin.name: pin for pin in pins}
    problems = [f"{pin.name} {pin.version} has no hash" for pin in pins if not pin.hashes]
    for name, env, _ in environments():
        applying = [pin.name for pin in pins if pin.marker is None or pin.marker.evaluate(env)]
        problems += [f"{n} is pinned more than once for {name}" for n in sorted({n for n in applying if applying.count(n) > 1})]
    for spec in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        requirement = Requirement(spec)
        pin = pinned.get(canonicalize_name(requirement.name))
        if pin is None:
            problems.append(f"{requirement.name} is not in requirements.txt")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(f"{requirement.name} {pin.version} is outside pyproject.toml's {requirement.specifier}")
    return problems


def uv() -> Path:
    """A pinned uv, installed once from PyPI into a cache folder outside the repository."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "symposium-lock" / f"uv-{UV_VERSION}"
    bindir = cache / ("Scripts" if os.name == "nt" else "bin")
    binary = bindir / ("uv.exe" if os.name == "nt" else "uv")
    if not binary.exists():
        print(f"lock: installing uv {UV_VERSION} into {cache} (once)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(cache)], check=True)
        subprocess.run([str(bindir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"uv=={UV_VERSION}"], check=True)
    return binary


def compile_lock() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "requirements.txt"
        subprocess.run(
            [str(uv()), "pip", "compile", "--quiet", "--universal", "--generate-hashes", "--no-header",
             "--python-version", f"{PYTHONS[0][0]}.{PYTHONS[0][1]}", "--index-url", "https://pypi.org/simple",
             "--output-file", str(out), str(ROOT / "pyproject.toml")],
            check=True, cwd=ROOT,
        )
        return HEADER + out.read_text()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="check the checked-in requirements.txt against pyproject.toml (offline)")
    mode.add_argument("--pypi", action="store_true", help="check the checked-in requirements.txt against pyproject.toml and PyPI")
    args = parser.parse_args()
    written = not (args.check or args.pypi)
    text = compile_lock() if written else LOCK.read_text()
    pins = parse(text)
    problems = check_direct(pins) + ([] if args.check else check(pins))
    if problems and args.check:
        problems.append("the lock is out of date: run `make lock`")
    for problem in problems:
        print(f"lock: {problem}", file=sys.stderr)
    if problems:
        return 1
    if written:
        LOCK.write_text(text)
    print(f"lock: {len(pins)} packages, {sum(len(p.hashes) for p in pins)} hashes"
          + ("" if args.check else f", a wheel of each for {len(PYTHONS) * len(PLATFORMS)} platforms and Pythons")
          + (f": wrote {LOCK.relative_to(ROOT)}" if written else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
