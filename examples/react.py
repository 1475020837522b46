"""A multi-step tool-using agent in the ReAct style: think in one line, act, observe, until it answers.

SmolLM2-135M cannot emit real tool calls, so the tools are called through a text protocol: each model step is one
chat completion whose reply names its action on an ``Action: tool[argument]`` line; the agent runs the tool and
sends its result back as the next user turn (``Observation: ...``). The decision of a step is therefore its
first ``Action:`` line, which is what the plugin's trajectory parser keys a text step on. Every step goes through
the pinned client, so each one is a call in the repetition's cassette, and a prefix of them can be replayed
exactly (``--consistency-resample``): the requests depend only on the task and on the replies before them.
"""

from __future__ import annotations

import re
from typing import Any

from agent import Sampling
from apps import CALENDAR, INBOX, SHOP

SYSTEM = (
    "You are an assistant that answers with tools. Each reply is one line: Action: tool[argument]. "
    "Tools: mail[word] searches the emails, calendar[day] lists the events of a day, "
    "shop[price] lists the items under a price, answer[text] gives the final answer."
)
#: One worked example, as turns: the protocol is shown, not only described.
EXAMPLE = [
    {"role": "user", "content": "Question: When is my dentist appointment tomorrow?"},
    {"role": "assistant", "content": "Action: calendar[tomorrow]"},
    {"role": "user", "content": "Observation: events tomorrow: team meeting at 15:00; dentist at 09:30"},
    {"role": "assistant", "content": "Action: answer[09:30]"},
]
ACTION = re.compile(r"action\s*:\s*(\w+)\s*\[([^\]\n]*)\]?", re.IGNORECASE)
MAX_STEPS = 4


def search_mail(word: str) -> str:
    word = word.strip().lower()
    found = [m for m in INBOX if word and (word in m["subject"].lower() or word in m["from"].lower())]
    shown = found or INBOX
    prefix = "" if found else f"no email matches {word!r}; all emails: "
    return prefix + "; ".join(f"from {m['from']}: {m['subject']}" for m in shown)


def list_events(day: str) -> str:
    day = day.strip().lower() or "tomorrow"
    events = CALENDAR.get(day, [])
    return f"events {day}: " + ("; ".join(f"{title} at {time}" for title, time in events) or "none")


def list_items(price: str) -> str:
    try:
        limit = float(price.strip().lstrip("$") or 20)
    except ValueError:
        limit = 20.0
    return f"items under {limit:g}: " + ", ".join(f"{n} ({p:.2f})" for n, p in SHOP.items() if p < limit)


TOOLS = {"mail": search_mail, "calendar": list_events, "shop": list_items}


def parse_action(reply: str) -> tuple[str, str] | None:
    """The first ``Action: tool[argument]`` of a reply, tool lower-cased; None when there is none."""
    found = ACTION.search(reply)
    return None if found is None else (found.group(1).lower(), found.group(2).strip())


def react(client: Any, model: str, question: str, sampling: Sampling, max_steps: int = MAX_STEPS) -> dict[str, Any]:
    """Run the loop; returns the actions taken (``tool[argument]`` each) and the final answer (None without one)."""
    messages: list[dict[str, str]] = [{"role": "system", "content": SYSTEM}, *EXAMPLE]
    messages.append({"role": "user", "content": f"Question: {question}"})
    actions: list[str] = []
    for _ in range(max_steps):
        reply = client.chat.completions.create(
            model=model,
            messages=messages,
            temperature=sampling.temperature,
            max_tokens=24,
            **({} if sampling.seed is None else {"seed": sampling.seed}),
        )
        text = (reply.choices[0].message.content or "").strip()
        messages.append({"role": "assistant", "content": text})
        action = parse_action(text)
        if action is None:
            actions.append("?")
            messages.append({"role": "user", "content": "Observation: reply with one line: Action: tool[argument]"})
            continue
        tool, argument = action
        actions.append(f"{tool}[{argument}]")
        if tool == "answer":
            return {"actions": actions, "answer": argument}
        observation = TOOLS[tool](argument) if tool in TOOLS else f"unknown tool {tool!r}; use mail, calendar or shop"
        messages.append({"role": "user", "content": f"Observation: {observation}"})
    return {"actions": actions, "answer": None}
