"""The records of a trajectory: a tool call, a decision, a message asked, a step.

Why frozen dataclasses of plain text: a decision is stored on every call record, travels from an xdist worker in
the repetition's payload and sits in the JSON report, so it must be small, hashable and serialise as it is. Tool
arguments are kept as normalised JSON text (sorted keys, no insignificant whitespace), so two calls with the same
arguments written in a different order or spacing are the same decision; arguments that are not JSON are kept
as the model sent them. A long text is cut to :data:`MAX_TEXT` characters and keyed by the digest of the whole,
so the report stays small and two long answers that differ late still count as two decisions.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

#: Characters of a decision's text (and of a message asked) kept on the record; the key covers the whole text.
MAX_TEXT = 2000
#: Characters of a message asked kept on the record (what was asked is shown, never compared).
MAX_ASKED = 240
#: Characters of a label (the tree, the terminal): a label says which branch, the report holds the rest.
MAX_LABEL = 60
#: A ReAct-style text step names its decision on an ``Action:`` line; the first one is the decision's key.
ACTION = re.compile(r"^\s*action\s*:\s*(\S.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def normalise_arguments(arguments: Any) -> str:
    """Tool arguments as canonical JSON text; a string that is not JSON stays as sent (stripped)."""
    if isinstance(arguments, str):
        text = arguments.strip()
        if not text:
            return "{}"
        try:
            value = json.loads(text)
        except ValueError:
            return text
    else:
        value = arguments
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return str(arguments)


def normalise_text(text: str) -> str:
    """The default answer normalisation of text: stripped, whitespace collapsed (see ``answers.default_normalize``)."""
    return " ".join(text.split())


#: Characters a credential is made of: a cut never ends inside a run of them.
TOKEN = re.compile(r"[A-Za-z0-9_\-.~+/=]+$")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, never inside a word: half a key would escape the redaction of the
    whole key (outputs redact known keys literally), so the word a cut would split is dropped whole."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if TOKEN.match(text[limit - 1 : limit]):  # the cut falls inside a word: drop the word's first part
        cut = TOKEN.sub("", cut)
    return cut + "…"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a decision: its name and its arguments as normalised JSON text; ``id`` may be missing."""

    name: str
    arguments: str = "{}"
    id: str | None = None

    def key(self) -> str:
        return f"{self.name}({self.arguments})"


@dataclass(frozen=True)
class Decision:
    """What the model decided at one step: text, tool calls (in the order sent), why it stopped, a refusal.

    ``text`` is whitespace-normalised and cut to :data:`MAX_TEXT`; ``text_digest`` is the digest of the whole
    normalised text when it was cut (None otherwise).
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None
    refusal: str | None = None
    text_digest: str | None = None
    #: A text decision's first ``Action:`` line (a ReAct-style agent), normalised: the step's decision.
    action: str | None = None

    @classmethod
    def of(
        cls,
        text: str,
        tool_calls: tuple[ToolCall, ...] = (),
        stop_reason: str | None = None,
        refusal: str | None = None,
    ) -> Decision:
        """A decision from the raw parts a parser read: text normalised and cut, the digest set when cut, the
        ReAct action read from the text's lines before they are joined."""
        normal = normalise_text(text)
        cut = None if len(normal) <= MAX_TEXT else digest(normal)
        refused = clip(normalise_text(refusal), MAX_TEXT) if refusal else None
        found = ACTION.search(text) if text and not tool_calls else None
        action = clip(normalise_text(found.group(1)), MAX_TEXT) if found else None
        return cls(clip(normal, MAX_TEXT), tool_calls, stop_reason or None, refused, cut, action)

    def key(self) -> str:
        """What alignment compares: the tool calls (names and normalised arguments, in order), else a refusal, else
        the ReAct action, else the normalised text; an empty decision is ``empty``."""
        if self.tool_calls:
            if len(self.tool_calls) == 1:  # most steps: one call, without a generator and a join
                return "tools:" + self.tool_calls[0].key()
            return "tools:" + ";".join(call.key() for call in self.tool_calls)
        if self.refusal:
            return "refusal:" + self.refusal
        if self.action is not None:
            return "action:" + self.action
        if self.text:
            return "text:" + (self.text_digest or self.text)
        return "empty"

    def label(self) -> str:
        """A short human form: ``tool search_invoices(...)``, ``tools a(...), b(...)``, ``text: ...``."""
        if self.tool_calls:
            names = ", ".join(
                f"{call.name}({'...' if call.arguments not in ('{}', '') else ''})" for call in self.tool_calls
            )
            return clip(("tool " if len(self.tool_calls) == 1 else "tools ") + names, MAX_LABEL)
        if self.refusal:
            return clip("refusal: " + self.refusal, MAX_LABEL)
        if self.action is not None:
            return clip("action: " + self.action, MAX_LABEL)
        if self.text:
            return clip("text: " + self.text, MAX_LABEL)
        return "(empty)" if self.stop_reason is None else f"(empty, {self.stop_reason})"

    def detail(self) -> str:
        """The label with the arguments of each tool call (cut): what tells apart two calls of the same tools."""
        if not self.tool_calls:
            return self.label()
        calls = ", ".join(f"{call.name}({clip(call.arguments, MAX_LABEL)})" for call in self.tool_calls)
        return clip(("tool " if len(self.tool_calls) == 1 else "tools ") + calls, 2 * MAX_LABEL)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(call.name for call in self.tool_calls)

    def words(self) -> str:
        """The digest of what the model wrote: its text (whole, as the key), its tool calls (names and normalised
        arguments, in order) and its refusal, without its ids or why it stopped. The model's turn an agent sends
        back in its next request gives the same digest when sent back as written (``capture.canonical``), so what
        the model wrote is told apart from what the agent changed."""
        text = self.text_digest or self.text
        return digest(json.dumps([text, [call.key() for call in self.tool_calls], self.refusal or ""]))


@dataclass(frozen=True)
class Parallel(Decision):
    """The decisions of one step whose calls overlapped in time (sent together from threads or ``asyncio.gather``):
    a set, whatever order the calls left or came back in. ``members`` are the calls' decisions ordered by what each
    was asked (``questions``, aligned), then by key: the same members give the same key, label and tool calls
    whichever call was sent first."""

    members: tuple[Decision, ...] = ()
    questions: tuple[str, ...] = ()

    @classmethod
    def of_calls(cls, pairs: list[tuple[str, Decision]]) -> Parallel:
        """The step of ``(question, decision)`` pairs, one per overlapping call."""
        ordered = sorted(pairs, key=lambda pair: (pair[0], pair[1].key()))
        members = tuple(decision for _, decision in ordered)
        return cls(
            tool_calls=tuple(call for member in members for call in member.tool_calls),
            members=members,
            questions=tuple(question for question, _ in ordered),
        )

    def key(self) -> str:
        return together([member.key() for member in self.members])

    def label(self) -> str:
        return clip("together: " + " | ".join(member.label() for member in self.members), MAX_LABEL)

    def detail(self) -> str:
        return clip("together: " + " | ".join(member.detail() for member in self.members), 2 * MAX_LABEL)

    def words(self) -> str:
        return digest(json.dumps([member.words() for member in self.members]))


def together(keys: list[str]) -> str:
    """The key of a step of overlapping calls from its members' keys, in the members' order."""
    return "together:" + json.dumps(keys, ensure_ascii=False)


@dataclass(frozen=True)
class Message:
    """One message of what a step was asked: its role, its text (cut to :data:`MAX_ASKED`), the tool call it
    answers (tool results) and the tools it called (an assistant turn sent back in the context)."""

    role: str
    text: str = ""
    tool_call_id: str | None = None


@dataclass(frozen=True)
class Step:
    """One model step of a repetition: the new messages since the previous step, and the decision taken."""

    index: int
    asked: tuple[Message, ...]
    decision: Decision


def message(role: Any, text: Any, tool_call_id: Any = None) -> Message:
    """A message asked, from the loose values a request body holds."""
    return Message(
        str(role or "user"),
        clip(normalise_text(text if isinstance(text, str) else content_text(text)), MAX_ASKED),
        str(tool_call_id) if tool_call_id else None,
    )


def content_text(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list of parts (others named by type)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, default=str)
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif "content" in part:  # an Anthropic tool_result block nests its own content
                parts.append(content_text(part["content"]))
            elif isinstance(part.get("output"), str):
                parts.append(part["output"])
            else:
                parts.append(f"[{part.get('type', 'part')}]")
    return " ".join(parts)


@dataclass(frozen=True)
class TreeNode:
    """One node: the decision taken at ``step`` by the ``count`` repetitions that shared the path to it.

    The root (``id`` 0, step 0, no parent) holds every repetition of the map. ``ended`` repetitions took no step
    after this node; ``repeats`` are their repetition numbers (every one that passes through the node).
    """

    id: int
    parent: int | None
    step: int
    label: str
    detail: str
    count: int
    passed: int
    ended: int = 0
    repeats: tuple[int, ...] = ()


@dataclass(frozen=True)
class DivergenceMap:
    """Where a task's repetitions part.

    ``divergent_step`` is the first step (from 1) at which they do not all decide the same (None: they never
    part); ``distinct`` the number of distinct decisions of each step among the repetitions that reached it;
    ``tool_distance`` the mean normalised edit distance between the repetitions' sequences of tool names (0:
    the same tools in the same order, 1: nothing in common; None with fewer than two repetitions); ``tree`` the
    trajectory tree, empty when the repetitions never part (each took the path any one repetition's calls show).
    """

    repetitions: int
    steps: int
    divergent_step: int | None
    distinct: list[int]
    tool_distance: float | None
    tree: list[TreeNode]
    #: The attribution line's clauses, for an inconsistent task ("; " joins them); empty otherwise.
    parts: list[str] = field(default_factory=list)

    @property
    def line(self) -> str | None:
        return "; ".join(self.parts) if self.parts else None
