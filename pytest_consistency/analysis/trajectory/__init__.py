"""Trajectories: what each repetition's model was asked and what it decided, step by step, and where repetitions part.

``model`` holds the records (parsed beside each provider, stored on every call record as it streams past);
``steps`` turns a repetition's calls into steps; ``align`` and ``tree`` are the pure analysis of a task's
repetitions (first divergent step, distinct decisions per step, the prefix tree, tool-sequence distance).
"""
