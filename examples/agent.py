"""A small tool-calling agent: the model picks the app, the agent calls its tool, the model answers.

It takes any OpenAI-compatible client, so the tests hand it the route-pinned one; ``MessagesAdapter`` lets the same
loop drive an Anthropic client (the Messages API) instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import SimpleNamespace
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


def few_shot_turns(prompt: str) -> list[dict[str, str]]:
    """``FEW_SHOT`` as chat turns: "Task: ..." from the user, "App: ..." from the assistant, the open task last."""
    turns = []
    for example in prompt.split("\n\n"):
        task, _, app = example.rpartition("\nApp:")
        turns.append({"role": "user", "content": task})
        if app:
            turns.append({"role": "assistant", "content": f"App:{app}"})
    return turns


class MessagesAdapter:
    """An Anthropic client behind the two OpenAI calls :func:`run` makes, so the same agent loop drives it.

    Both become ``client.messages.create``. The Messages API has no text completion, so the few-shot prompt of the
    tool selection is sent as the conversation it stands for (each example's task a user turn, its app the
    assistant's); the answer's messages are sent as they are. It takes no seed either, so a seeded sampling is
    refused rather than silently unseeded.
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self.completions = SimpleNamespace(create=self._complete)
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._chat))

    def _create(
        self, model: str, messages: list[dict[str, str]], temperature: float, max_tokens: int, seed: int | None
    ) -> str:
        if seed is not None:
            raise ValueError("the Messages API takes no seed")
        # anthropic 2.x's messages.create has no temperature parameter any more; the API still takes it in the body.
        reply = self.client.messages.create(
            model=model, messages=messages, max_tokens=max_tokens, extra_body={"temperature": temperature}
        )
        return "".join(block.text for block in reply.content if block.type == "text")

    def _complete(
        self, *, model: str, prompt: str, temperature: float, max_tokens: int, seed: int | None = None
    ) -> Any:
        text = self._create(model, few_shot_turns(prompt), temperature, max_tokens, seed)
        return SimpleNamespace(choices=[SimpleNamespace(text=text)])

    def _chat(
        self,
        *,
        model: str,
        messages: list[dict[str, str]],
        temperature: float,
        max_tokens: int,
        seed: int | None = None,
    ) -> Any:
        text = self._create(model, messages, temperature, max_tokens, seed)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=text))])
