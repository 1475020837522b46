"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from hypothesis import strategies as st

from pytest_consistency.stats.metrics import TaskCounts

#: A suite's tasks as success counts: 1 to 40 tasks, each with n and k up to 12 (k <= n) and c within 0..n.
task_counts_lists = st.lists(
    st.tuples(st.integers(1, 12), st.integers(1, 12), st.integers(0, 12)).map(
        lambda t: TaskCounts(c=min(t[2], t[0]), n=t[0], k=min(t[1], t[0]))
    ),
    min_size=1,
    max_size=40,
)
