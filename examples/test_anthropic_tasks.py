"""The same agent on the Anthropic route: ``pinned_anthropic_client`` (Messages API, ``POST /v1/messages``).

Recorded from the same SmolLM2-135M as the other examples, through a LiteLLM proxy whose Anthropic-compatible
endpoint translates to the llama server's chat completions (see scripts/record_examples.sh). Needs the anthropic
SDK (``pip install 'pytest-consistency[anthropic]'``): without it this module is skipped.
"""

import pytest

pytest.importorskip("anthropic", reason="the Anthropic example needs pytest-consistency[anthropic]")

from agent import MessagesAdapter
from test_agent_tasks import PINNED, attempt


@pytest.mark.parametrize("name", ["invoice-sender"])
@pytest.mark.repeat_consistency(n=5, min_pass=0.0)
def test_anthropic_pinned(pinned_anthropic_client, pinned_anthropic_route, consistency, name):
    attempt(MessagesAdapter(pinned_anthropic_client), pinned_anthropic_route, consistency, name, PINNED)
