"""Resampling one step of a recorded repetition from its exact prefix (``--consistency-resample=TASK@STEP``).

Why a subpackage: the divergence map says *where* repetitions part; resampling proves *which step's sampling*
causes it, by replaying a repetition's first STEP-1 calls from its cassette (the agent gets exactly the context it
had) and letting only step STEP and what follows go live, M times. Each concern is a module of its own and, except
``session`` (the glue the plugin's hooks call), a pure function of plain data:

- ``plan``: the option values (``TASK@STEP``), the sample cassettes' paths, and the checks that name what is wrong;
- ``prefix``: reading a repetition's cassette, writing a sample's prefix, and checking a sample still starts with it;
- ``cost``: what live samples will spend, estimated from the recording of steps STEP..end;
- ``distribution``: the decisions the samples took at step STEP and the pass rate after each (the typed result);
- ``bisect``: the search for the step whose resampling alone reproduces the task's inconsistency.
"""
