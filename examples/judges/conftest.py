"""The judge example is a suite of its own (its own ``consistency.yaml``), run as ``pytest examples/judges``.

The main example suite (``pytest examples``) leaves it out, so that its figures and gates stay those of the agent.
"""
