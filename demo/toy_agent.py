"""A toy shopping agent that needs no model: it samples from a seeded generator, so its mistakes are
reproducible run to run (and under xdist), yet differ between repetitions like a sampled LLM's do."""

from __future__ import annotations

import random

CATALOG = {"widget": 12.5, "gadget": 19.99, "doohickey": 22.0, "sprocket": 7.25, "gizmo": 31.0}


def run(task: str, repeat: int, sloppiness: float) -> list[str]:
    """Answer "which items cost less than LIMIT?"; with probability ``sloppiness`` it misreads the limit."""
    limit = float(task.rsplit(" ", 1)[-1])
    rng = random.Random(f"{task}/{repeat}")
    if rng.random() < sloppiness:
        limit += 5  # the kind of slip a sampled model makes now and then
    return sorted(name for name, price in CATALOG.items() if price < limit)
