"""What a report format is: the one Protocol of the family (as pytest-xdist's ``scheduler/protocol.py`` is for its
schedulers).

A format has a ``name`` (what ``--consistency-output NAME=FILE`` and ``show --format`` select it by), the file
``suffix`` it is usually written to, and ``render(summary) -> str``: a pure rendering of the whole typed session
result as one text. The built-in ones are one module each (:mod:`.terminal`, :mod:`.json_report`, :mod:`.markdown`,
:mod:`.html`, :mod:`.junit`), each defining ``FORMAT``; the registry that finds them by name is this package's
``__init__``. A conftest's own format needs only these three members (no base class, no import of this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the result model is needed only at the session end
    from pytest_consistency.model.result import SessionSummary


class Format(Protocol):
    """A report format: renders a whole session result as one text."""

    name: str
    suffix: str

    def render(self, summary: SessionSummary) -> str: ...
