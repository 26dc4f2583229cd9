"""What Linux's /proc says of a process: the descriptors and memory figures the soak, the bench
and the backpressure tests compare."""

from __future__ import annotations

import os


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
