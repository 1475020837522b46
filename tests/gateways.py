"""Real gateways the tests start on loopback: the LiteLLM proxy in front of the fake server, and llmock."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

MASTER_KEY = "sk-test-litellm-master-0123456789abcdef"
UPSTREAM_KEY = "sk-test-upstream-0123456789abcdef"
ROOT = Path(__file__).resolve().parent.parent


def litellm_binary() -> str | None:
    """``$CONSISTENCY_LITELLM``, then ``.venv-litellm`` beside the repository (what .ci/run makes), then PATH."""
    candidates = [
        os.environ.get("CONSISTENCY_LITELLM"),
        str(ROOT / ".venv-litellm" / "bin" / "litellm"),
        shutil.which("litellm"),
    ]
    return next((c for c in candidates if c and Path(c).is_file()), None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def config_text(upstream: str) -> str:
    params = f'api_base: "{upstream}", api_key: {UPSTREAM_KEY}'
    return f"""
model_list:
  - model_name: agent-model
    litellm_params: {{model: openai/fake-model, {params}}}
    model_info: {{id: deployment-a}}
  - model_name: agent-model
    litellm_params: {{model: openai/fake-model, {params}}}
    model_info: {{id: deployment-b}}
  - model_name: primary
    litellm_params: {{model: openai/primary-model, api_base: "http://127.0.0.1:9/v1", api_key: {UPSTREAM_KEY}}}
  - model_name: backup
    litellm_params: {{model: openai/backup-model, {params}}}
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 0
  fallbacks: [{{primary: [backup]}}]
litellm_settings:
  num_retries: 0
general_settings:
  master_key: {MASTER_KEY}
"""


@contextmanager
def litellm_proxy(upstream: str, workdir: Path) -> Iterator[str]:
    binary = litellm_binary()
    if binary is None:
        message = "the LiteLLM proxy is not installed (.ci/run installs it into .venv-litellm)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    config = workdir / "litellm.yaml"
    config.write_text(config_text(upstream))
    port = free_port()
    log = (workdir / "litellm.log").open("w")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("OPENAI_API_KEY", None)
    process = subprocess.Popen(
        [binary, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health/liveliness", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = (workdir / "litellm.log").read_text()[-2000:]
                    raise RuntimeError("LiteLLM proxy did not start: " + tail) from None
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
