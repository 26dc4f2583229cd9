"""What a per-platform vsix carries beyond the universal one (docs/development.md, "Packages per platform"):
the backend's locked wheels for that platform and every Python the extension supports (3.11 to 3.14), so its
first start needs no package index, and `uv` (for a Python when the machine has none), taken from uv's wheel
on PyPI and checked against the sha256 pinned below.

    python extension/scripts/vsix_target.py TARGET EXTENSION_DIR     TARGET: a vsce target (linux-x64, darwin-arm64, ...)
    python extension/scripts/vsix_target.py --uv TARGET DIR          only TARGET's uv, into DIR; prints its path

Writes EXTENSION_DIR/backend/wheels/ and EXTENSION_DIR/bin/uv (uv.exe on Windows). Downloads go through pip
(PyPI, or the index pip is configured with), each file checked against requirements.txt's hashes, and are kept
in a cache folder (SYMPOSIUM_VSCODE_CACHE, default ~/.cache/symposium-vscode/platform-wheels) between builds.
Environment markers are read here, for the target, not by pip (which would read them for this machine: no
pywin32 for Windows); pip downloads the resulting exact list with --no-deps.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from lock import LOCK, MANYLINUX, parse  # noqa: E402  (the lock's own reader)
from packaging.tags import mac_platforms  # noqa: E402

PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
UV_VERSION = "0.13.9"
# target -> (marker environment, pip --platform tags, uv's wheel on PyPI and its sha256)
TARGETS: dict[str, tuple[dict[str, str], list[str], str, str]] = {
    "linux-x64": (
        {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "x86_64"},
        [f"{m}_x86_64" for m in MANYLINUX],
        "uv-0.13.9-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "d7f459fe4fd247d830351c75686d3996ace3c6f3f728eb0e85a30b7ada0cef19",
    ),
    "linux-arm64": (
        {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "platform_machine": "aarch64"},
        [f"{m}_aarch64" for m in MANYLINUX],
        "uv-0.13.9-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl",
        "5435c5ce14a56431208ca0996416d310f1598e8c2c8ba707688985a16bb82dbe",
    ),
    "darwin-x64": (
        {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "x86_64"},
        list(mac_platforms((14, 0), "x86_64")),
        "uv-0.13.9-py3-none-macosx_10_12_x86_64.whl",
        "c16ed11e013557536b3e60065f1b912f6407bd6518e041b961e23ef9e6b4fbf5",
    ),
    "darwin-arm64": (
        {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "platform_machine": "arm64"},
        list(mac_platforms((14, 0), "arm64")),
        "uv-0.13.9-py3-none-macosx_11_0_arm64.whl",
        "66c512266d633bef48384a1f53003f41f2a8e7b36fe6e7fbfd3e0fd52d96fa63",
    ),
    "win32-x64": (
        {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt", "platform_machine": "AMD64"},
        ["win_amd64"],
        "uv-0.13.9-py3-none-win_amd64.whl",
        "6a44b2ed8111d2f60d2b92627c5dccda3f7ed7570b18ce115e569cd68c28246b",
    ),
    "win32-arm64": (
        {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt", "platform_machine": "ARM64"},
        ["win_arm64"],
        "uv-0.13.9-py3-none-win_arm64.whl",
        "eeb92051c2123b9730c46b04cc843cfa4bc7d7b0aec56df431a2215ef4cb0273",
    ),
}


def cache() -> Path:
    base = os.environ.get("SYMPOSIUM_VSCODE_CACHE") or Path.home() / ".cache" / "symposium-vscode"
    return Path(base) / "platform-wheels"


def requirements_for(target: str, python: str) -> str:
    """The lock's pins that apply to `target` under `python`, markers read for it, as a hashed list pip takes with --no-deps."""
    markers = {**TARGETS[target][0], "python_version": python, "python_full_version": f"{python}.0", "implementation_name": "cpython",
               "platform_python_implementation": "CPython", "platform_release": "", "platform_version": "", "implementation_version": f"{python}.0"}
    lines = []
    for pin in parse(LOCK.read_text()):
        if pin.marker is None or pin.marker.evaluate(markers):
            lines.append(f"{pin.name}=={pin.version} " + " ".join(f"--hash=sha256:{h}" for h in sorted(pin.hashes)))
    return "\n".join(lines) + "\n"


def pip_download(args: list[str], into: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                           "--only-binary", ":all:", "--implementation", "cp", "-d", str(into), *args], capture_output=True, text=True)


NO_WHEEL = re.compile(r"No matching distribution found for ([A-Za-z0-9._-]+)==")


def wheels(target: str, out: Path) -> set[str]:
    """The target's wheels for each Python into `out` (from the cache, downloaded once); returns the packages
    PyPI has no wheel of for it (cryptography for Intel Macs and Windows on Arm: the backend cannot be
    installed there, docs/development.md says so)."""
    _, tags, _, _ = TARGETS[target]
    kept = cache() / target
    kept.mkdir(parents=True, exist_ok=True)
    platforms = [arg for tag in tags for arg in ("--platform", tag)]
    missing: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for python in PYTHONS:
            listed = Path(tmp) / f"requirements-{python}.txt"
            while True:
                lines = [line for line in requirements_for(target, python).splitlines() if line.split("==")[0] not in missing]
                listed.write_text("\n".join(lines) + "\n")
                # pip finds what it already has in `kept` (--find-links) and downloads the rest.
                done = pip_download([*platforms, "--python-version", python, "--find-links", str(kept), "--require-hashes", "-r", str(listed)], kept)
                if done.returncode == 0:
                    break
                found = NO_WHEEL.search(done.stderr)
                if not found:
                    raise SystemExit(f"vsix_target: pip download failed for {target}, Python {python}:\n{done.stderr.strip()[-2000:]}")
                missing.add(found.group(1).lower())
    # Only the lock's files (the cache may hold those of an earlier lock).
    locked = {h for pin in parse(LOCK.read_text()) for h in pin.hashes}
    out.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(kept.glob("*.whl")):
        if hashlib.sha256(wheel.read_bytes()).hexdigest() in locked:
            shutil.copy2(wheel, out / wheel.name)
    return missing


def uv(target: str, bin_dir: Path) -> Path:
    """uv's executable from its pinned wheel (downloaded once, its sha256 checked each time)."""
    _, tags, filename, sha256 = TARGETS[target]
    kept = cache() / "uv"
    wheel = kept / filename
    if not wheel.exists():
        done = pip_download([*(a for tag in (filename.rsplit("-", 1)[1].removesuffix(".whl").split("."))
                        for a in ("--platform", tag)), "--python-version", "3.12", f"uv=={UV_VERSION}"], kept)
        if done.returncode != 0:
            raise SystemExit(f"vsix_target: could not download {filename}:\n{done.stderr.strip()[-2000:]}")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != sha256:
        raise SystemExit(f"vsix_target: {filename} has sha256 {digest}, not the pinned {sha256}: not used")
    name = "uv.exe" if target.startswith("win32-") else "uv"
    bin_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        member = next(n for n in archive.namelist() if n.endswith(f".data/scripts/{name}"))
        (bin_dir / name).write_bytes(archive.read(member))
    (bin_dir / name).chmod(0o755)
    return bin_dir / name


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--uv" and argv[1] in TARGETS:  # only uv, into a folder (the unit tests')
        print(uv(argv[1], Path(argv[2])))
        return 0
    if len(argv) != 2 or argv[0] not in TARGETS:
        print(f"usage: vsix_target.py TARGET EXTENSION_DIR (TARGET: {', '.join(TARGETS)})", file=sys.stderr)
        return 2
    target, extension = argv[0], Path(argv[1])
    out = extension / "backend" / "wheels"
    shutil.rmtree(out, ignore_errors=True)
    missing = wheels(target, out)
    if missing:
        # What the extension tells the user there, instead of trying an index that has nothing either.
        (out / "MISSING").write_text("".join(f"{name}\n" for name in sorted(missing)))
    shutil.rmtree(extension / "bin", ignore_errors=True)
    binary = uv(target, extension / "bin")
    print(f"vsix_target: {target}: {len(list(out.glob('*.whl')))} wheels, {binary.name} {UV_VERSION}"
          + (f"; PyPI has no wheel of {', '.join(sorted(missing))} for it: the backend cannot be installed there" if missing else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
