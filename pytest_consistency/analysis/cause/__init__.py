"""Why a task's repetitions part: the first thing that differed between them, named as one cause.

``events`` turns a repetition's call records into what is compared, step by step (the route of the step's
attempts, the canonical request, the model's decision; then how it ended); ``find`` walks the repetitions' events
as a prefix tree to the first branch and names its cause (``route``, ``input``, ``environment``, ``sampling``,
``outside the model``), with the differing texts (``spans``) and the advice; ``shares`` adds the causes up over the
suite (each task's share of the consistency gap goes to its cause).
"""
