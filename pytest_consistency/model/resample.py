"""The typed result of a resample session: the summary's ``resample`` field and the report's ``resample`` section.

Why plain dataclasses of their own: the summary (:mod:`..result`) holds one, the JSON report serialises it and
reads it back through :mod:`..serial`, and the renderers draw it; none of them reads a dict by string key.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DecisionRow:
    """One decision the samples took at the resampled step: how many took it, and how many of those passed."""

    key: str
    label: str
    samples: int
    passed: int


@dataclass
class ResampleSummary:
    """``TASK@STEP`` resampled M times from repetition ``source``'s prefix, and what the samples did."""

    task: str
    step: int
    source: int
    #: M, and the samples scored (passed or failed; a skipped or errored sample is in ``errors``).
    samples: int
    scored: int
    #: Calls the source repetition recorded (its step count), and the directory of the sample cassettes.
    steps: int
    cassettes: str
    #: Samples that went live in this session (the others replayed their cassettes), and the estimate said
    #: before they did: calls and tokens, from the recording of steps STEP..end.
    live: int = 0
    estimated_calls: int = 0
    estimated_tokens: int = 0
    rows: list[DecisionRow] = field(default_factory=list)
    #: Why a sample counts in no row (its setup failed, the prefix did not replay), one line each.
    errors: list[str] = field(default_factory=list)
    #: Whether the samples agree with the cause found for the task (one sentence); None when it has none.
    cause: str | None = None

    @property
    def distinct(self) -> int:
        return len(self.rows)

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)

    @property
    def reproduces(self) -> bool:
        """The resampled outcomes include a pass and a failure: resampling this step alone reproduces the task's
        inconsistency (see :mod:`.bisect`)."""
        counted = sum(row.samples for row in self.rows)
        return 0 < self.passed < counted

    def clause(self) -> str:
        """The attribution clause: ``resampling step 2 alone gives 3 distinct decisions in 10 samples``."""
        counted = sum(row.samples for row in self.rows)
        noun = "decision" if self.distinct == 1 else "distinct decisions"
        return f"resampling step {self.step} alone gives {self.distinct} {noun} in {counted} samples"
