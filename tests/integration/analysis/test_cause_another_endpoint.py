"""An embeddings call in one repetition only is another request, not another route (issue 41): the real SDK.

A retrieval agent embeds its question when its cache is cold, which only the first repetition finds, then asks the
chat model; repetition 1 is answered otherwise. The embeddings call goes to another model than the chat call by
design: read as a route, the cause was ``route`` with "pin the route"; the agent sent a request the others did not,
so it is ``input at step 1``, recorded live and replayed.
"""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI, Step
from suites import load_report, run_recorded

AGENT = """
import pytest


@pytest.mark.repeat_consistency(n=3)
def test_retrieval(pinned_client, consistency):
    if consistency.repeat == 1:  # a cold cache: later repetitions find the vector kept
        pinned_client.embeddings.create(model="text-embedding-3-small", input="total for march?")
    messages = [{"role": "system", "content": "You are a bookkeeper."}, {"role": "user", "content": "total?"}]
    answer = pinned_client.chat.completions.create(model="fake-model", messages=messages).choices[0].message.content
    consistency.record(answer)
    assert answer == "total-42", answer
"""


def test_an_embedding_in_one_repetition_only_is_input(pytester: pytest.Pytester, fake: FakeOpenAI) -> None:
    fake.script(Step(text="total-41"), Step(text="total-42"), Step(text="total-42"))
    pytester.makepyfile(test_agent=AGENT)
    live = run_recorded(pytester, fake.base_url, "once", "-p", "no:randomly", "--consistency-report=live.json")
    assert live.ret == 1, live.stdout.str()
    assert [r["path"] for r in fake.requests].count("/v1/embeddings") == 1
    (task,) = load_report(pytester, "live.json")["tasks"]
    assert (task["cause"], task["why"]["step"], task["why"]["where"]) == ("input", 1, "the endpoints called")
    assert "embeddings (repetition 1) vs none (repetition 2)" in task["why"]["detail"]
    assert "pin the route" not in live.stdout.str()
    fake.reset()
    replayed = run_recorded(pytester, fake.base_url, "none", "-p", "no:randomly", "--consistency-report=replay.json")
    assert replayed.ret == 1, replayed.stdout.str()
    (again,) = load_report(pytester, "replay.json")["tasks"]
    assert (again["cause"], again["why"]) == (task["cause"], task["why"])
    assert fake.requests == []
