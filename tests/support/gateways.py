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
ROOT = Path(__file__).resolve().parents[2]


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
    """The LiteLLM proxy in front of the fake OpenAI server (``config_text``); yields its OpenAI base URL (``/v1``)."""
    with litellm_gateway(config_text(upstream), workdir) as gateway:
        yield f"{gateway.url}/v1"


# --- the Anthropic route through LiteLLM (tests/integration/route/test_gateway_anthropic.py) ---------------------

#: The deployment id (``x-litellm-model-id``) of each Anthropic model group in ``anthropic_config_text``.
ANTHROPIC_DEPLOYMENTS = {
    "claude-test-model": ("claude-direct",),
    "claude-retry": ("claude-retry",),
    "claude-pair": ("claude-pair-a", "claude-pair-b"),
    "claude-primary": ("claude-primary",),
    "claude-backup": ("claude-backup",),
}


def anthropic_config_text(upstream: str, upstream_key: str) -> str:
    """LiteLLM in front of an Anthropic Messages API (``FakeAnthropic``), every group an ``anthropic/`` deployment.

    ``claude-test-model`` goes straight through; ``claude-retry`` retries once inside the gateway; ``claude-pair``
    shuffles between two deployments; ``claude-primary`` falls back to ``claude-backup``. Cooldowns are off, so a
    scripted upstream error never takes a deployment out of the next test's way.
    """
    params = f'api_base: "{upstream}", api_key: {upstream_key}'
    served = {
        "claude-test-model": "claude-test-model",
        "claude-retry": "claude-test-model",
        "claude-pair": "claude-test-model",
        "claude-primary": "claude-primary-model",
        "claude-backup": "claude-backup-model",
    }
    entries = []
    for group, ids in ANTHROPIC_DEPLOYMENTS.items():
        extra = ", num_retries: 1" if group == "claude-retry" else ""
        for deployment in ids:
            entries.append(
                f"  - model_name: {group}\n"
                f"    litellm_params: {{model: anthropic/{served[group]}, {params}{extra}}}\n"
                f"    model_info: {{id: {deployment}}}\n"
            )
    return (
        "model_list:\n"
        + "".join(entries)
        + f"""router_settings:
  routing_strategy: simple-shuffle
  num_retries: 0
  disable_cooldowns: true
  fallbacks: [{{claude-primary: [claude-backup]}}]
litellm_settings:
  num_retries: 0
general_settings:
  master_key: {MASTER_KEY}
"""
    )


class Gateway:
    """A running LiteLLM proxy: its URL without ``/v1`` (the anthropic SDK appends ``/v1/messages``), its process."""

    def __init__(self, url: str, process: subprocess.Popen[bytes]) -> None:
        self.url = url
        self.process = process

    @property
    def port(self) -> int:
        return int(self.url.rpartition(":")[2])

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """The proxy stopped (SIGSTOP): the kernel still accepts connections for it, but nothing ever answers."""
        import signal

        if not hasattr(signal, "SIGSTOP"):
            pytest.skip("freezing the proxy needs SIGSTOP (POSIX)")
        self.process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.process.send_signal(signal.SIGCONT)

    def waiting_connections(self) -> int | None:
        """Connections the kernel accepted for the proxy that it has not taken yet (Linux ``/proc/net/tcp``): while
        it is frozen, any connection a client made. None where that cannot be read."""
        try:
            lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
        except OSError:
            return None
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rpartition(":")[2], 16) == self.port:  # LISTEN
                return int(fields[4].partition(":")[2], 16)  # rx_queue: the accept backlog
        return None


@contextmanager
def litellm_gateway(config: str, workdir: Path) -> Iterator[Gateway]:
    """The LiteLLM proxy on loopback with ``config``, and no provider credentials of its own from the environment."""
    binary = litellm_binary()
    if binary is None:
        message = "the LiteLLM proxy is not installed (.ci/run installs it into .venv-litellm)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    (workdir / "litellm.yaml").write_text(config)
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        env.pop(name, None)
    with (workdir / "litellm.log").open("w") as log:
        process = subprocess.Popen(
            [binary, "--config", str(workdir / "litellm.yaml"), "--host", "127.0.0.1", "--port", str(port)],
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
            yield Gateway(f"http://127.0.0.1:{port}", process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
