"""What Linux's /proc says of a process: its descriptors and memory (the soak, the bench, the
backpressure tests), its process group, and when it is gone (the lifecycle tests)."""

from __future__ import annotations

import os
from pathlib import Path

import trio


def open_fds(pid: int) -> int:
    """How many descriptors the process holds."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def _status_mb(pid: int, field: str) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/{pid}/status")


def rss_mb(pid: int) -> float:
    """The process's resident set now (VmRSS), in MB."""
    return _status_mb(pid, "VmRSS")


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set so far (VmHWM), in MB."""
    return _status_mb(pid, "VmHWM")


async def process_gone(pid: int) -> None:
    """Wait (on a pidfd, no polling) until process `pid` has exited."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)


def process_group(pid: int) -> int:
    return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[2])


def processes_in_group(pgid: int) -> list[int]:
    """Live processes (not zombies) whose process group is `pgid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found
