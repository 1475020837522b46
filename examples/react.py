"""A multi-step tool-using agent in the ReAct style: act, observe, until it answers.

SmolLM2-135M cannot emit real tool calls, so the tools are called through a text protocol: each model step is one
text completion of the transcript so far, which ends in ``Action:``; the model completes the line with
``tool[argument]``, the agent runs the tool and appends its result as the next line (``Observation: ...``). A
step's decision is therefore the rest of its action line (``email[lunch]``, ``answer[Bob]``): the text the
trajectory parser keys a text step on. Every step goes through the pinned client, so each one is a call in the
repetition's cassette, and a prefix of them can be replayed exactly (``--consistency-resample``): the requests
depend only on the question and on the replies before them.
"""

from __future__ import annotations

import re
from typing import Any

from agent import Sampling
from apps import CALENDAR, INBOX, SHOP

#: Worked examples of the protocol, then the question: the model continues the transcript with its next line.
EXAMPLES = (
    "Question: When is my dentist appointment tomorrow?\n"
    "Action: calendar[tomorrow]\n"
    "Observation: events tomorrow: team meeting at 15:00; dentist at 09:30\n"
    "Action: answer[09:30]\n\n"
    "Question: Which items cost less than 10 dollars?\n"
    "Action: shop[10]\n"
    "Observation: items under 10: sprocket (7.25)\n"
    "Action: answer[sprocket]\n\n"
    "Question: Who sent me the slides?\n"
    "Action: mail[slides]\n"
    "Observation: from Carol: Slides for the review\n"
    "Action: answer[Carol]\n\n"
)
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


#: The tools by the names the model may use ("email" is mail, as the app-choosing agent reads it too).
TOOLS = {"mail": search_mail, "email": search_mail, "calendar": list_events, "shop": list_items}


def parse_action(reply: str) -> tuple[str, str] | None:
    """The first ``Action: tool[argument]`` of a reply, tool lower-cased; None when there is none."""
    found = ACTION.search(reply)
    return None if found is None else (found.group(1).lower(), found.group(2).strip())


def react(client: Any, model: str, question: str, sampling: Sampling, max_steps: int = MAX_STEPS) -> dict[str, Any]:
    """Run the loop; returns the actions taken (``tool[argument]`` each) and the final answer (None without one).

    Each step is a text completion of the transcript so far (``/completions``: the 135M model follows a pattern it
    sees far better than chat instructions), stopped at the line the agent writes itself (``Observation:``)."""
    transcript = EXAMPLES + f"Question: {question}\nAction:"
    actions: list[str] = []
    for _ in range(max_steps):
        reply = client.completions.create(
            model=model,
            prompt=transcript,
            temperature=sampling.temperature,
            max_tokens=16,
            stop=["\n"],
            **({} if sampling.seed is None else {"seed": sampling.seed}),
        )
        line = (reply.choices[0].text or "").strip()
        action = parse_action("Action: " + line)
        if action is None:
            actions.append("?")
            transcript += f" {line}\nObservation: write the action as tool[argument]\nAction:"
            continue
        tool, argument = action
        actions.append(f"{tool}[{argument}]")
        transcript += f" {tool}[{argument}]\n"
        if tool == "answer":
            return {"actions": actions, "answer": argument}
        observation = TOOLS[tool](argument) if tool in TOOLS else f"unknown tool {tool!r}; use mail, calendar or shop"
        transcript += f"Observation: {observation}\nAction:"
    return {"actions": actions, "answer": None}
