"""The token ledger: one total for every process and thread of a session, each addition read-modify-write atomic."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.synchronize import Event
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_consistency.shared.ledger import CostBudgetExceeded, Ledger, TokenBudgetExceeded

SPAWN = multiprocessing.get_context("spawn")
ADDS = 60
THREADS = 3


def _add_in_threads(path: Path) -> None:
    ledger = Ledger(path, limit=10**9)
    barrier = threading.Barrier(THREADS)

    def run(_: int) -> None:
        barrier.wait()
        for _ in range(ADDS):
            ledger.add(1)

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(run, range(THREADS)))


def _add_from_process(path: str, ready: Event, go: Event) -> None:
    ready.set()
    assert go.wait(30)
    _add_in_threads(Path(path))


def test_every_addition_of_every_process_and_thread_is_counted(tmp_path: Path) -> None:
    """Three workers of three threads each add one token at a time: the total loses none (an addition that read
    the count while another was writing it would)."""
    path = tmp_path / "tokens"
    go = SPAWN.Event()
    ready = [SPAWN.Event() for _ in range(3)]
    processes = [SPAWN.Process(target=_add_from_process, args=(str(path), flag, go)) for flag in ready]
    for process in processes:
        process.start()
    try:
        assert all(flag.wait(30) for flag in ready)
        go.set()
        for process in processes:
            process.join(120)
            assert process.exitcode == 0
    finally:
        for process in processes:
            process.kill()
            process.join(10)
    assert Ledger(path, limit=0).spent() == 3 * THREADS * ADDS
    assert path.read_text() == str(3 * THREADS * ADDS)


def test_the_budget_is_refused_once_spent_and_shared_by_ledgers_on_one_file(tmp_path: Path) -> None:
    one, two = Ledger(tmp_path / "tokens", limit=10), Ledger(tmp_path / "tokens", limit=10)
    assert one.spent() == 0 and not (tmp_path / "tokens").exists()  # reading adds nothing
    one.add(6)
    two.add(0)
    two.check()
    two.add(5)
    assert one.spent() == 11
    with pytest.raises(TokenBudgetExceeded, match="11 tokens used > --consistency-token-budget=10"):
        one.check()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens", "tokens.lock"]  # no scratch file left


def test_the_cost_budget_counts_priced_calls_and_added_costs_in_dollars_beside_the_tokens(tmp_path: Path) -> None:
    """Two ledgers on one file (two workers): a call's price (the function the session hands over) and a test's
    added cost add up in ``<file>.usd``; the token count stays where it was, and no token budget is checked."""
    prices = {"priced": 0.003, "unpriced": None}
    one = Ledger(tmp_path / "tokens", None, cost_limit=0.005, price=lambda call: prices[call.model])
    two = Ledger(tmp_path / "tokens", None, cost_limit=0.005, price=lambda call: prices[call.model])
    one.spend(SimpleNamespace(model="priced", total_tokens=10))
    two.spend(SimpleNamespace(model="unpriced", total_tokens=10))  # no price: no dollars, its tokens still count
    two.check()
    two.add(0, 0.0025)  # consistency.cost()
    assert (one.spent(), one.spent_usd()) == (20, 0.0055)
    with pytest.raises(CostBudgetExceeded, match=r"\$0.0055 spent > --consistency-cost-budget=0.005"):
        one.check()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens", "tokens.lock", "tokens.usd"]


def test_without_a_cost_budget_no_dollars_are_counted(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "tokens", limit=100, price=lambda call: 1.0)
    ledger.spend(SimpleNamespace(total_tokens=3))
    ledger.check()
    assert (ledger.spent(), ledger.spent_usd()) == (3, 0.0)
    assert not (tmp_path / "tokens.usd").exists()
