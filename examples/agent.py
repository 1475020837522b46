"""A small tool-calling agent: the model picks the app, the agent calls its tool, the model answers.

It takes any OpenAI-compatible client, so the tests hand it the route-pinned one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from apps import TOOLS


@dataclass(frozen=True)
class Sampling:
    temperature: float
    seed: int | None = None


FEW_SHOT = (
    "Task: Buy a new lamp.\nApp: shopping\n\n"
    "Task: When is my dentist appointment?\nApp: calendar\n\n"
    "Task: Did Bob reply to my message?\nApp: mail\n\n"
    "Task: Order two packs of batteries.\nApp: shopping\n\n"
    "Task: {task}\nApp:"
)


def _seed(sampling: Sampling) -> dict[str, Any]:
    return {} if sampling.seed is None else {"seed": sampling.seed}


def choose_app(text: str) -> str | None:
    """The first app the model names ("email" counts as mail)."""
    found = re.search(r"\b(shopping|calendar|e?mail)\b", text.lower())
    return None if found is None else found.group(1).removeprefix("e")


def run(client: Any, model: str, task: str, sampling: Sampling) -> dict[str, str | None]:
    """Answer ``task``: returns the app the model chose (tool selection) and its final answer's first line.

    Tool selection is a few-shot text completion (``/completions``), the answer a chat completion
    (``/chat/completions``), so both endpoints go through the pinned client and its cassettes.
    """
    choice = (
        client.completions.create(
            model=model,
            prompt=FEW_SHOT.format(task=task),
            temperature=sampling.temperature,
            max_tokens=3,
            **_seed(sampling),
        )
        .choices[0]
        .text
    )
    app = choose_app(choice)
    if app is None:
        return {"app": None, "answer": choice.strip()}
    observation = TOOLS[app]("friday") if app == "calendar" and "friday" in task.lower() else TOOLS[app]()
    reply = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": f"{observation}\nQuestion: {task}\nAnswer:"}],
        temperature=sampling.temperature,
        max_tokens=24,
        **_seed(sampling),
    )
    lines = (reply.choices[0].message.content or "").strip().splitlines()
    return {"app": app, "answer": lines[0].strip() if lines else ""}
