"""What a report and a worker carry for the plugin, and what the plugin kept before it woke: names and small
readers that every process needs whether or not the plugin woke in it (``dormant``), in a module that imports
nothing of the plugin.

A report carries the payload of its repetition, or the marks of a repetition or a handle that add nothing else
(``payload``, ``outcome``); under xdist they reach the controller with the report. A worker hands its secrets to the
controller in ``workeroutput`` when it finishes (``redaction``).
"""

from __future__ import annotations

from typing import Any

#: The repetition's payload (``payload.payload``): JSON text, or the ``RepetitionPayload`` itself where it was made.
ATTRIBUTE = "consistency_payload"
#: Set instead of the payload on a report of a marked repetition that adds nothing but its duration.
MARKED = "consistency_marked"
#: Set on a report of an unmarked test that used the ``consistency`` handle (a repetition of one).
HANDLE = "consistency_handle"
#: The ``workeroutput`` entry that carries a worker's secrets to the controller.
WORKER_KEY = "consistency_known_secrets"


def from_repetition(report: Any) -> bool:
    """Whether the report is a repetition's (a marked one's, or an unmarked test's with the handle): its text gets
    credential shapes redacted too (``redaction``)."""
    return (
        getattr(report, ATTRIBUTE, None) is not None or getattr(report, MARKED, False) or getattr(report, HANDLE, False)
    )


def marked_repetition(report: Any) -> bool:
    """Whether the report is a marked repetition's (its payload, or the mark of a phase that added nothing)."""
    return getattr(report, ATTRIBUTE, None) is not None or getattr(report, MARKED, False)


def has_text(report: Any) -> bool:
    """Whether the report carries any text to redact (a passing phase with nothing captured has none)."""
    return bool(
        report.longrepr
        or report.sections
        or getattr(report, "user_properties", None)
        or getattr(report, "wasxfail", None)
    )


class Kept:
    """What the dormant role kept of a session before the plugin woke, for the roles that would have kept it
    (``configure.catch_up``). A plain class: this module is read at every pytest start, and ``dataclasses``
    compiles the methods of each class it makes (see ``config/options.py``)."""

    __slots__ = ("cassette_dirs", "collection_errors", "failed", "session", "started")

    def __init__(self) -> None:
        #: The session and when it started (``time.time()``), once it started.
        self.session: Any = None
        self.started: float | None = None
        #: Node ids of the tests whose report failed, and of the collection errors (``Controller``).
        self.failed: set[str] = set()
        self.collection_errors: set[str] = set()
        #: Which directories below the cassette root hold only cassettes, as the collection walk found them so far.
        self.cassette_dirs: dict[str, bool] = {}
