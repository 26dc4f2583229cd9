"""`make bench`: measure, print a table, and say whether each figure is within its budget."""

from __future__ import annotations

import sys

from bench import cold_start, matching


def main() -> int:
    rows: list[tuple[str, str, str, bool]] = []
    cold = cold_start.measure()
    rows.append((
        "cold start: spawn to first model list, / `import trio, attrs, cattrs`",
        f"{cold['backend_s'] * 1000:.0f} ms / {cold['imports_s'] * 1000:.0f} ms = {cold['ratio']:.2f}x",
        "<= 1.5x",
        cold["ratio"] <= 1.5,
    ))
    match = matching.measure()
    growth = match["ms_1000"] / match["ms_10"]
    rows.append((
        "matching: one more request, 1,000 conversations x 200 messages",
        f"{match['ms_1000']:.3f} ms",
        "< 2 ms",
        match["ms_1000"] < 2,
    ))
    rows.append((
        "matching: 1,000 conversations / 10 conversations",
        f"{match['ms_1000']:.3f} / {match['ms_10']:.3f} ms = {growth:.2f}x",
        "flat (< 1.5x)",
        growth < 1.5,
    ))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'result':<40}  {'budget':<14}  ok")
    for name, result, budget, ok in rows:
        print(f"{name:<{width}}  {result:<40}  {budget:<14}  {'yes' if ok else 'NO'}")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
