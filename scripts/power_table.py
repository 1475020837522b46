"""Print the power table of docs/baselines.md: how often each regression test fires, for A/A and for four kinds of drop.

Baseline pass rates: the A/A mix of tests/unit/stats (8 tasks at 1.0, 4 at 0.9, 4 at 0.7, 2 at 0.5, 2 at 0.2),
repeated for 100 tasks. Seeded, so the table is the same every time: ``python scripts/power_table.py [reps]``.
"""

from __future__ import annotations

import sys

from pytest_consistency.stats.power import simulate

MIX = [1.0] * 8 + [0.9] * 4 + [0.7] * 4 + [0.5] * 2 + [0.2] * 2


def scenarios(t: int) -> dict[str, list[float]]:
    base = MIX * (t // len(MIX))
    few = list(base)
    for i in range(3):
        few[i] = 0.2  # three always-passing tasks
    one = list(base)
    one[0] = 0.2
    return {
        "A/A (no change)": base,
        "every p x 0.9": [p * 0.9 for p in base],
        "every p x 0.8": [p * 0.8 for p in base],
        "3 tasks 1.0 -> 0.2": few,
        "1 task 1.0 -> 0.2": one,
    }


def main(reps: int) -> None:
    print("| change | T | n | stratified (suite) | McNemar on pass^n flips | per-task Boschloo + BH |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in scenarios(20):
        for t in (20, 100):
            base = scenarios(t)["A/A (no change)"]
            for n in (5, 10):
                r = simulate(base, scenarios(t)[name], n, reps=reps, seed=t * 100 + n)
                print(f"| {name} | {t} | {n} | {r.stratified:.3f} | {r.mcnemar:.3f} | {r.per_task:.3f} |", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
