"""Re-judging the recorded repetitions (``--consistency-rejudge=M``): the agent replays, only the judge is asked again.

Why a subpackage: a task's consistency gap can be its LLM judge flipping on the same agent output. Every repetition's
cassette holds the agent's exchanges and the judge's, each judge exchange tagged (``x-consistency-role: judge``), so
the agent can be replayed exactly while the judge is sampled M times on that same output. Each concern is a module
of its own, pure but for :mod:`.guard` (which holds a vcrpy cassette):

- ``plan``: which item is which (repetition r, judge sample j), where each sample's cassette lives;
- ``cassettes``: a sample's cassette written as its source repetition's exchanges that are not the judge's, and the
  checks that a committed sample is complete and still matches its source;
- ``guard``: while a sample records, a request that is not the judge's is played from the recording or refused,
  never sent.

The pytest glue is one role object, ``plugin.rejudge.Rejudge``, registered as ``consistency-rejudge`` when the mode
is on; the figures are ``analysis.judge`` (statistics in ``stats.agreement``).
"""
