"""The cause of one inconsistent task: the first thing that differed between its repetitions and explains their
outcomes.

Each repetition is read as a sequence of events (:mod:`.events`): for every step the model's words its request
sends back, the endpoints it called, its route, its canonical request and its decision, then how it ended (the
attempts after its last step, its outcome and answer class). The repetitions share a prefix of these events; an
event at which they do not all agree is a branch, and its kind names the cause:

- the model's words sent back (what it wrote at an earlier step, resent as written) -> ``sampling`` at the step
  that wrote them; a model's turn the agent changed or dropped -> ``input``;
- the endpoints a step called (an embedding in some repetitions only) -> what the request rule below says of the
  step's requests: ``environment`` when a new turn differs too, else ``input``; never ``route``;
- the route of a step (or of the attempts after the last one), per endpoint kind -> ``route``, which wins over a
  request or decision that differs at the same step (the line says so);
- the request of step 1 -> ``input``; of a later step -> ``environment`` when what differs is a new turn (a tool
  result, a user turn) after the same decisions, ``input`` when the agent changed what it sends every time (the
  system prompt, the tools, a sampling parameter, the history it resends);
- a repetition that stopped where another went on after the same decisions -> ``environment`` (what its tools gave
  back made its agent stop), unless the attempts it ended on differ in route;
- the decision of a step -> ``sampling`` (the same request, apart from generated ids, decided differently);
- the outcome, after the same steps -> ``outside the model``.

Not every difference explains why the repetitions' outcomes differ: a tool result that differs in one passing
repetition changes nothing the task is scored on. So the cause named is the first branch that **separates** the
outcomes: the repetitions that took each of its values all ended alike (passed, or failed), and not all of them ended
alike. What "ended" means is passed or not when the task's outcomes differ, and the class of the answer when they
agree but its answers do not. A branch within repetitions that had already parted compares those alone: the step-3
decision that fails two of the four repetitions that saw the same tool results separates them, whatever a fifth
saw. The outcome itself always separates the repetitions that reach it, so a task whose calls explain nothing is
``outside the model``. Every other branch is a cause "also" found, in the order the events come (the first
difference that did not separate among them); when no branch separates (the answers were not compared), the first
branch is named, as the first difference. Naming the first separating branch keeps the word from moving with n: a
harmless difference seen by more repetitions as n grows does not take the gap from the decision that fails them.

Pure functions over call records: the same records give the same finding live, replayed, under xdist and in a merge
of shards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from pytest_consistency.analysis.cause.events import (
    SAMPLING,
    UNKNOWN,
    Member,
    Run,
    Step,
    differing,
    route_kinds,
    route_values,
)
from pytest_consistency.analysis.cause.spans import evidence, quoted
from pytest_consistency.model.cause import Cause, Evidence, Finding, Sent

#: Events per step: the model's words its request sent back (written at earlier steps), the kinds of endpoint it
#: called, route, request, decision.
PER_STEP = 5
RESENT, CALLS, ROUTE, REQUEST, DECISION = "resent", "calls", "route", "request", "decision"
END, OUTCOME = "end", "outcome"
#: Causes "also" found that a line lists at most.
MAX_OTHERS = 4
#: Parameters a provider does not take (no ``seed`` in the Messages API): not advised as unpinned.
NO_SEED = frozenset({"anthropic"})


def events(run: Run, unknown: frozenset[int]) -> list[tuple[str, Hashable]]:
    """The events of one repetition; a step in ``unknown`` (a repetition did not record its request) compares no
    request there, nor the model's words it sent back."""
    out: list[tuple[str, Hashable]] = []
    for index, step in enumerate(run.steps):
        request, resent = (UNKNOWN, UNKNOWN) if index in unknown else (step.request, step.resent)
        out += [(RESENT, resent), (CALLS, step.calls), (ROUTE, step.route), (REQUEST, request)]
        out.append((DECISION, step.decision))
    out += [(CALLS, run.trailing_calls), (END, run.trailing), (OUTCOME, (run.passed, run.answer))]
    return out


Branch = tuple[int, list[list[Run]]]


def branches(runs: Sequence[Run]) -> list[Branch]:
    """Every point where repetitions part (position, groups, the largest first), the first one first: the prefix
    tree of their events walked depth first, positions ascending."""
    unknown = frozenset(i for run in runs for i, step in enumerate(run.steps) if not step.known)
    seqs = {run.repeat: events(run, unknown) for run in runs}
    found: list[Branch] = []
    stack: list[tuple[list[Run], int]] = [(list(runs), 0)]
    while stack:
        group, position = stack.pop()
        while len(group) > 1:
            tokens = [seqs[run.repeat][position] if position < len(seqs[run.repeat]) else None for run in group]
            if len(set(tokens)) == 1:
                if tokens[0] is None:
                    break
                position += 1
                continue
            by_token: dict[Any, list[Run]] = {}
            for run, token in zip(group, tokens, strict=True):
                by_token.setdefault(token, []).append(run)
            groups = sorted(by_token.values(), key=lambda g: (-len(g), g[0].repeat))
            found.append((position, groups))
            stack.extend((g, position + 1) for g in groups)
            break
    return sorted(found, key=lambda branch: (branch[0], branch[1][0][0].repeat))


def ending(runs: Sequence[Run]) -> Callable[[Run], Hashable]:
    """How a repetition ended, as its task's cause must explain it: passed or not when the outcomes differ, else its
    answer's class (the task is inconsistent in its answers only)."""
    if len({run.passed for run in runs}) > 1:
        return lambda run: run.passed
    return lambda run: run.answer


def separates(groups: Sequence[Sequence[Run]], ended: Callable[[Run], Hashable]) -> bool:
    """Whether a branch separates its repetitions' outcomes: each group ended alike, and not all groups alike."""
    endings = [{ended(run) for run in group} for group in groups]
    return all(len(each) == 1 for each in endings) and len(set().union(*endings)) > 1


def find_cause(runs: Sequence[Run], task_id: str = "TASK") -> Finding | None:
    """The cause of the first branch of ``runs`` (scored repetitions, in order) that separates their outcomes (the
    first branch when none does), with every other branch as others; None when they never part (nothing in the
    calls or outcomes differs)."""
    found = branches(runs)
    if not found:
        return None
    ended = ending(runs)
    chosen = next((branch for branch in found if separates(branch[1], ended)), found[0])
    named = classify(*chosen, task_id=task_id, total=len(runs))
    others: list[str] = []
    for branch in found:
        if branch is chosen:
            continue
        other = classify(*branch, task_id=task_id, total=len(runs))
        name = _name(other)
        if name not in others and name != _name(named):
            others.append(name)
    if len(others) > MAX_OTHERS:
        others = [*others[:MAX_OTHERS], f"{len(others) - MAX_OTHERS} more"]
    return Finding(**{**_fields(named), "others": tuple(others)})


def _name(finding: Finding) -> str:
    return finding.cause if finding.step is None else f"{finding.cause} at step {finding.step}"


def _fields(finding: Finding) -> dict[str, Any]:
    return {name: getattr(finding, name) for name in finding.__dataclass_fields__}


def classify(position: int, groups: list[list[Run]], task_id: str = "TASK", total: int = 0) -> Finding:
    """The finding at one branch: the events of its groups' first repetitions (``a``, ``b``) at ``position``
    (``total``: the task's scored repetitions, of which the branch's groups may be a part)."""
    a, b = groups[0][0], groups[1][0]
    repeats = (a.repeat, b.repeat)
    steps_a, steps_b = len(a.steps), len(b.steps)
    index, slot = divmod(position, PER_STEP)
    if index >= min(steps_a, steps_b):  # at least one of them has no step here: it ended (or both did)
        if steps_a == steps_b:
            after = position - PER_STEP * steps_a
            if after == 0:  # the kinds of endpoint called after the last step
                return _calls(index + 1, a, b, None, None)
            if after == 1:  # the attempts after the last step
                return _route(index + 1, a.trailing, b.trailing, repeats, groups, None)
            return _outside(a, b, groups, total)
        ended, went_on = (a, b) if steps_a < steps_b else (b, a)
        kinds = route_kinds(ended.trailing, went_on.steps[index].route) if ended.trailing else []
        if kinds:
            return _route(index + 1, ended.trailing, went_on.steps[index].route, repeats, groups, None)
        return _stopped(index + 1, ended, went_on)
    step_a, step_b = a.steps[index], b.steps[index]
    step = index + 1
    if slot == 0:
        return _resent(step, a, b, step_a, step_b, task_id)
    if slot == 1:
        return _calls(step, a, b, step_a, step_b)
    if slot == 2:
        outranked = None
        group_steps = [g[0].steps[index] for g in groups if index < len(g[0].steps)]
        if len({s.request for s in group_steps}) > 1:
            outranked = "request"
        elif len({s.decision for s in group_steps}) > 1:
            outranked = "decision"
        return _route(step, step_a.route, step_b.route, repeats, groups, outranked)
    if slot == 3:
        return _request(step, a, b, step_a, step_b)
    return _sampling(step, step_a, step_b, repeats, task_id, together(a, b, step))


def _route(
    step: int,
    left: Sequence[Any],
    right: Sequence[Any],
    repeats: tuple[int, int],
    groups: list[list[Run]],
    outranked: str | None,
) -> Finding:
    kinds = tuple(route_kinds(left, right)) or ("route",)
    shown = _route_facts(kinds, left, right, repeats)
    detail = f"{', '.join(kinds)} differed between repetitions {min(repeats)} and {max(repeats)}"
    if shown:
        detail += f": {shown}"
    if outranked == "request":
        detail += "; the requests differ too at this step, the route comes first"
    elif outranked == "decision":
        detail += "; the decisions differ too at this step, the route comes first"
    moved = sorted(run.repeat for group in groups[1:] for run in group)
    return Finding(
        cause="route",
        step=step,
        repeats=repeats,
        where=", ".join(kinds),
        detail=detail,
        advice=(
            f"pin the route ({', '.join(kinds)} differed; repetition{'s' if len(moved) != 1 else ''} "
            f"{', '.join(map(str, moved))} travelled another one): one base URL, key, model and deployment for every "
            "repetition, no gateway fallback"
        ),
        kinds=kinds,
        outranked=outranked,
    )


#: Route facts shown for a kind: the attempt field's index (see ``events.attempt_route``) and its name.
_FACTS = {
    "base_url": (1, "base URL"),
    "key": (2, "key"),
    "model_requested": (3, "model asked"),
    "model_served": (4, "model served"),
    "deployment": (5, "deployment"),
}


def _route_facts(kinds: Sequence[str], left: Sequence[Any], right: Sequence[Any], repeats: tuple[int, int]) -> str:
    """``deployment a (repetition 1) vs b (repetition 2)``, the lower repetition first, per kind."""
    sides = sorted([(repeats[0], left), (repeats[1], right)], key=lambda side: side[0])
    shown = []
    for kind in kinds:
        if kind in _FACTS:
            index, name = _FACTS[kind]
            shown_sides = differing(sides[0][1], sides[1][1], index)  # of the endpoint kinds where it differs
            values = [", ".join(sorted(str(x) for x in route_values(attempts, index))) for attempts in shown_sides]
        elif kind in ("retries", "errors"):
            name = "attempts"
            values = [str(sum(1 for a in attempts if a[SAMPLING])) for _, attempts in sides]
        else:
            continue
        shown.append(f"{name} {values[0]} (repetition {sides[0][0]}) vs {values[1]} (repetition {sides[1][0]})")
    return "; ".join(dict.fromkeys(shown))


def _calls(step: int, a: Run, b: Run, step_a: Step | None, step_b: Step | None) -> Finding:
    """The repetitions called other kinds of endpoint at a step (or after their last, ``step_a`` None): the agent
    sent other requests, so the step rule for requests that differ decides. A new turn of the model's request that
    differs too (a tool result the agent embedded in one repetition only) is ``environment``, as it would be without
    the call; else it is ``input``: what made the agent call another endpoint in some repetitions only (a cache an
    earlier repetition filled, a branch on a value that varies) is the agent's, never the route."""
    if step_a is not None and step_b is not None and step_a.known and step_b.known and step_a.request != step_b.request:
        found = _request(step, a, b, step_a, step_b)
        if found.cause == "environment":
            return found
    calls_a = step_a.calls if step_a is not None else a.trailing_calls
    calls_b = step_b.calls if step_b is not None else b.trailing_calls
    sides = sorted([(a.repeat, calls_a, calls_b), (b.repeat, calls_b, calls_a)])
    shown = " vs ".join(
        f"{', '.join(k for k in mine if k not in other) or 'none'} (repetition {repeat})"
        for repeat, mine, other in sides
    )
    only = sorted({k for _, mine, other in sides for k in mine if k not in other})
    if step_a is None:
        lead = "after the same decisions, the agent made other calls after its last model call"
    elif step == 1:
        lead = "the first requests differ"
    else:
        lead = f"after the same decisions, the agent sent a different request at step {step}"
    return Finding(
        cause="input",
        step=step,
        repeats=(a.repeat, b.repeat),
        where="the endpoints called",
        detail=f"{lead} in the endpoints called: {shown}",
        advice=(
            f"make the agent call the same endpoints in every repetition: what makes it call {', '.join(only)} in some "
            "only (a cache an earlier repetition filled, a branch on a value that varies) is part of what it is "
            "given; clear it per repetition, or freeze it"
        ),
    )


def _parts(sent: Sent | None) -> dict[str, str]:
    return dict(sent.standing) if sent else {}


def differing_members(step_a: Step, step_b: Step) -> tuple[Member | None, Member | None]:
    """Of two steps whose requests differ, the first member of each whose request the other step did not send (None
    for a step that sent nothing the other did not: it sent fewer)."""
    parts_a = Counter(member.part for member in step_a.members)
    parts_b = Counter(member.part for member in step_b.members)
    only_a, only_b = parts_a - parts_b, parts_b - parts_a
    first_a = next((member for member in step_a.members if member.part in only_a), None)
    first_b = next((member for member in step_b.members if member.part in only_b), None)
    return first_a, first_b


def _request(step: int, a: Run, b: Run, step_a: Step, step_b: Step) -> Finding:
    repeats = (a.repeat, b.repeat)
    sent_a, sent_b = step_a.sent, step_b.sent
    counted = None
    if len(step_a.members) > 1 or len(step_b.members) > 1:  # requests sent together: the ones the other did not send
        member_a, member_b = differing_members(step_a, step_b)
        if member_a is None or member_b is None:
            counted = f"the number of requests sent together ({len(step_a.members)} vs {len(step_b.members)})"
        else:
            sent_a, sent_b = member_a.sent, member_b.sent
    standing_a, standing_b = _parts(sent_a), _parts(sent_b)
    standing = [key for key in sorted(set(standing_a) | set(standing_b)) if standing_a.get(key) != standing_b.get(key)]
    sides: tuple[Evidence, ...] = ()
    where = "the request"
    history = bool(sent_a and sent_b and sent_a.history != sent_b.history)
    new_turn = False
    if counted is not None:
        where, new_turn = counted, True
    elif standing:
        key = standing[0]
        where = f"`{key}`"
        sides = evidence(repeats, a.texts.get(standing_a.get(key, "")), b.texts.get(standing_b.get(key, "")))
        if key not in standing_a or key not in standing_b:
            sent_by = a.repeat if key in standing_a else b.repeat
            sides = ()
            where = f"`{key}` (sent only by repetition {sent_by})"
    elif history:
        where = "the conversation the agent resent before this step's new turns"
    else:
        new_a, new_b = (sent_a.new if sent_a else ()), (sent_b.new if sent_b else ())
        for (label_a, part_a), (label_b, part_b) in zip(new_a, new_b, strict=False):
            if part_a != part_b:
                where = label_a if label_a == label_b else f"{label_a} / {label_b}"
                sides = evidence(repeats, a.texts.get(part_a), b.texts.get(part_b))
                new_turn = True
                break
        else:
            if len(new_a) != len(new_b):
                where = f"the number of new turns ({len(new_a)} vs {len(new_b)})"
                new_turn = True
    shown = quoted(sides)
    if step == 1 or not new_turn:
        cause: Cause = "input"
        lead = (
            "the first requests differ"
            if step == 1
            else f"after the same decisions, the agent sent a different request at step {step}"
        )
        detail = f"{lead} in {where}" + (f": {shown}" if shown else "")
        advice = (
            f"freeze what varies in {where} (a fixed clock, a seeded id, a sorted list), or declare it not part of "
            "the question (--consistency-match-ignore)"
        )
    else:
        cause = "environment"
        detail = f"the same decisions up to step {step - 1}, then {where} differed" + (f": {shown}" if shown else "")
        advice = f"make what produced {where} deterministic, or record it (a fixture or a cassette of the tool)"
    return Finding(cause=cause, step=step, repeats=repeats, where=where, detail=detail, advice=advice, sides=sides)


def _stopped(step: int, ended: Run, went_on: Run) -> Finding:
    where = f"repetition {ended.repeat} made no model call at step {step}"
    return Finding(
        cause="environment",
        step=step,
        repeats=(went_on.repeat, ended.repeat),
        where=where,
        detail=(
            f"the same decisions up to step {step - 1}, then repetition {went_on.repeat} asked the model again and "
            f"repetition {ended.repeat} stopped: what its tools gave back (an error, an empty result) ended its run"
        ),
        advice="make the tools deterministic, or record their results, so every repetition gets the same back",
    )


def decided(step_a: Step, step_b: Step) -> tuple[str, str, Sent | None]:
    """How two steps' differing decisions read, and what was sent for them: of steps of requests sent together,
    the first request each answered otherwise."""
    if len(step_a.members) > 1 or len(step_b.members) > 1:
        for member in step_a.members:
            other = next((o for o in step_b.members if o.part == member.part and o.key != member.key), None)
            if other is not None:
                return member.label or member.key, other.label or other.key, member.sent
    return step_a.label or step_a.decision, step_b.label or step_b.decision, step_a.sent


def _resent(step: int, a: Run, b: Run, step_a: Step, step_b: Step, task_id: str) -> Finding:
    """The model's turns two requests sent back differ: ``sampling`` at the step whose model wrote the first that
    differs (what it wrote is its decision); else the agent sent back other turns than its model wrote (or fewer):
    ``input``."""
    repeats = (a.repeat, b.repeat)
    turns_a, turns_b = _flat(step_a.resent), _flat(step_b.resent)
    if turns_a and len(turns_a) == len(turns_b):
        at = next(i for i, pair in enumerate(zip(turns_a, turns_b, strict=True)) if pair[0] != pair[1])
        wrote_a, wrote_b = _writer(a, step, turns_a[at][0]), _writer(b, step, turns_b[at][0])
        if wrote_a is not None and wrote_b is not None:
            index = min(wrote_a[0], wrote_b[0])
            grouped = together(a, b, index + 1)
            return _worded(index + 1, a.steps[index], b.steps[index], wrote_a[1], wrote_b[1], repeats, task_id, grouped)
    return Finding(
        cause="input",
        step=step,
        repeats=repeats,
        where="the model's turns the agent sent back",
        detail=(
            f"after the same decisions, the agent sent back other turns than its model wrote at step {step}: "
            f"{len(turns_a)} as written (repetition {a.repeat}) vs {len(turns_b)} (repetition {b.repeat})"
        ),
        advice="send the model's turns back as it wrote them, or leave them out alike in every repetition",
    )


def _flat(resent: Any) -> tuple[tuple[str, str], ...]:
    """The ``(words, turn)`` digests of a step's ``resent`` (a step of requests sent together has one tuple of them
    per request)."""
    out: list[tuple[str, str]] = []
    for item in resent if isinstance(resent, tuple) else ():
        if item and isinstance(item[0], tuple):
            out.extend(item)
        elif item:
            out.append(item)
    return tuple(out)


def _writer(run: Run, before: int, words: str) -> tuple[int, Member] | None:
    """The step (index) and call of ``run`` before step ``before`` whose model wrote ``words``."""
    for index, step in enumerate(run.steps[: before - 1]):
        for member in step.members:
            if member.words == words:
                return index, member
    return None


def _worded(
    step: int,
    step_a: Step,
    step_b: Step,
    member_a: Member,
    member_b: Member,
    repeats: tuple[int, int],
    task_id: str,
    grouped: bool = False,
) -> Finding:
    """``sampling`` at the step whose model wrote the same decision otherwise, sent back later."""
    found = _sampling(step, step_a, step_b, repeats, task_id, grouped)
    sides: tuple[Evidence, ...] = ()
    if member_a.words != member_b.words:
        sides = evidence(repeats, member_a.text, member_b.text)
        said = f"in other words: {quoted(sides)}" if sides else "in other words"
    else:  # the same text and calls: what differs is what else it wrote (its reasoning)
        said = "with other reasoning"
    params = found.detail.partition("; sent ")[2]
    detail = (
        f"the same request got the same decision ({member_a.label}) {said}; the agent sent the model's turn back, "
        f"so later requests differ; sent {params}"
    )
    return Finding(
        **{**_fields(found), "where": f"what the model wrote at step {step}", "detail": detail, "sides": sides}
    )


def together(a: Run, b: Run, step: int) -> bool:
    """Whether either repetition sent calls together at or before ``step``: a resample replays calls one by one,
    and its steps are not these."""
    return any(len(s.members) > 1 for run in (a, b) for s in run.steps[:step])


def _sampling(
    step: int, step_a: Step, step_b: Step, repeats: tuple[int, int], task_id: str, grouped: bool = False
) -> Finding:
    provider = str(step_a.route[-1][0]) if step_a.route else "openai"
    target = (
        "more repetitions (--consistency-resample replays calls one by one, and cannot hold calls sent together)"
        if grouped
        else f"--consistency-resample='{task_id}@{step}'"
    )
    label_a, label_b, sent = decided(step_a, step_b)
    sampling = sent.sampling if sent else ()
    params = dict(sampling)
    unpinned: list[str] = []
    temperature = params.get("temperature")
    if temperature is None:
        unpinned.append("temperature (not sent: the API's default applies)")
    elif temperature not in ("0", "0.0"):
        unpinned.append(f"temperature={temperature}")
    if provider not in NO_SEED and "seed" not in params:
        unpinned.append("seed (not sent)")
    sent_text = ", ".join(f"{k}={v}" for k, v in sampling) or "no sampling parameter"
    detail = f"the same request got different decisions ({label_a} vs {label_b}); sent {sent_text}"
    if unpinned:
        detail += f"; not pinned: {', '.join(unpinned)}"
        advice = (
            "pin sampling (temperature=0"
            + (", a seed" if provider not in NO_SEED else "")
            + f") and confirm with {target}"
        )
    else:
        detail += "; sampling was pinned, yet the model decided differently (a seed is best effort)"
        advice = f"the provider does not repeat itself even pinned: confirm with {target}"
    return Finding(
        cause="sampling",
        step=step,
        repeats=repeats,
        where=f"the decision at step {step}",
        detail=detail,
        advice=advice,
        sampling=tuple(sampling),
        unpinned=tuple(unpinned),
    )


def _outside(a: Run, b: Run, groups: list[list[Run]], total: int = 0) -> Finding:
    runs = [run for group in groups for run in group]
    passed = sum(run.passed for run in runs)
    answers = len({run.answer for run in runs if run.answer is not None})
    steps = len(a.steps)
    if len(runs) < total:  # the others had parted from them before: name those compared here
        which = f"repetitions {', '.join(str(run.repeat) for run in sorted(runs, key=lambda run: run.repeat))}"
        same = (
            f"{which} sent the same {steps} request(s) and got the same decisions"
            if steps
            else f"{which} made no model call the plugin saw"
        )
    else:
        same = (
            f"all {len(runs)} repetitions sent the same {steps} request(s) and got the same decisions"
            if steps
            else f"none of the {len(runs)} repetitions made a model call the plugin saw"
        )
    detail = f"{same}, yet {passed}/{len(runs)} passed" + (
        f" and they gave {answers} different answers" if answers > 1 else ""
    )
    return Finding(
        cause="outside the model",
        step=None,
        repeats=(a.repeat, b.repeat),
        where="after the last model call",
        detail=detail,
        advice=(
            "look at the assertion, the agent's own code after its last call, or state the calls do not show "
            "(files, a database, the clock, random numbers)"
        ),
    )
