#!/usr/bin/env bash
# The steps of examples/ci/consistency.yml, run locally on the example suite, replayed offline from cassettes/:
# every shard, the merge (with the baseline when given one), the gates, the step summary, the HTML page and the
# JUnit XML. The exit status is the merge's: 0 when the gates pass, 1 when a gate or a task fails (the task is
# named in the output), 2 on unusable input. A shard that broke (exit status not 0) stops the run with its status,
# as the workflow's gate job does not start when a shard job failed.
#
#   scripts/ci_local.sh [--shards N] [--baseline FILE] [--out DIR] [--root DIR] [-- PYTEST_ARGS...]
#
#   --shards N       shard jobs to run, one after another (default 2)
#   --baseline FILE  a consistency.json of an earlier run (in CI: the last main-branch run's artifact); adds the
#                    baseline gates $BASELINE_GATES
#   --out DIR        where every file is written (default: a new temporary directory); nothing is written elsewhere
#   --root DIR       the folder holding examples/ and conftest_example.py (default: this repository)
#   PYTEST_ARGS      passed to every shard's pytest (e.g. -n 2)
#
# Environment: PYTHON (default: .venv/bin/python of this repository, else python3), GATES (default
# "--consistency-gap-max=30 --route-drift-max=8", the main job's), BASELINE_GATES (default
# "--consistency-regressions-max=0 --gap-increase-max=5").
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
usage() {
    echo "ci_local.sh: error: $1" >&2
    echo "usage: scripts/ci_local.sh [--shards N] [--baseline FILE] [--out DIR] [--root DIR] [-- PYTEST_ARGS...]" >&2
    exit 2
}

shards=2
baseline=""
out=""
root="$REPO"
while [ $# -gt 0 ]; do
    case "$1" in
        --shards) [ $# -ge 2 ] || usage "--shards needs a number"; shards="$2"; shift 2 ;;
        --baseline) [ $# -ge 2 ] || usage "--baseline needs a file"; baseline="$2"; shift 2 ;;
        --out) [ $# -ge 2 ] || usage "--out needs a directory"; out="$2"; shift 2 ;;
        --root) [ $# -ge 2 ] || usage "--root needs a directory"; root="$2"; shift 2 ;;
        --) shift; break ;;
        *) usage "unknown option '$1' (pytest options go after --)" ;;
    esac
done
case "$shards" in
    '' | *[!0-9]* | 0) usage "--shards '$shards' is not a whole number of at least 1" ;;
esac
if [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
    usage "--baseline '$baseline': no such file (give the consistency.json of an earlier run, or leave --baseline out)"
fi
[ -f "$root/examples/consistency.yaml" ] || usage "--root '$root' has no examples/consistency.yaml"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi
GATES="${GATES:---consistency-gap-max=30 --route-drift-max=8}"
BASELINE_GATES="${BASELINE_GATES:---consistency-regressions-max=0 --gap-increase-max=5}"
if [ -z "$out" ]; then out="$(mktemp -d "${TMPDIR:-/tmp}/consistency-ci.XXXXXX")"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
[ -z "$baseline" ] || baseline="$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")"
# Replayed offline: no key, no route from the environment, and the step summary is written once, by this script.
unset EXAMPLE_LLM_KEY EXAMPLE_GATEWAY_KEY OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
step_summary="${GITHUB_STEP_SUMMARY:-}"
unset GITHUB_STEP_SUMMARY
cd "$root"

for shard in $(seq 1 "$shards"); do
    echo "== shard $shard/$shards"
    # As in the workflow: no gates on a shard (the merge decides them), its outputs into --out.
    "$PYTHON" -m pytest examples -p no:cacheprovider --consistency-config=examples/consistency.yaml \
        --consistency-cassettes="$REPO/cassettes" --consistency-shard="$shard/$shards" --consistency-record=none \
        --consistency-report="$out/shard-$shard.json" --consistency-md="$out/shard-$shard.md" \
        --consistency-html="$out/shard-$shard.html" "$@" || {
        status=$?
        echo "ci_local.sh: shard $shard/$shards broke (exit status $status); not merging" >&2
        exit "$status"
    }
done

echo "== merge${baseline:+, compared with $baseline}"
merge=(-m pytest_consistency.cli merge)
for shard in $(seq 1 "$shards"); do merge+=("$out/shard-$shard.json"); done
# As in the workflow, the merge writes every output itself (the command line's paths win over the YAML's outputs),
# the step summary included when there is one.
merge+=(-o "$out/consistency.json" --consistency-config=examples/consistency.yaml --consistency-md="$out/summary.md")
merge+=(--consistency-html="$out/consistency.html" --junitxml="$out/junit.xml")
# shellcheck disable=SC2206  # the gates are lists of options
merge+=($GATES)
if [ -n "$baseline" ]; then
    # shellcheck disable=SC2206
    merge+=("--consistency-baseline=$baseline" $BASELINE_GATES)
fi
status=0
if [ -n "$step_summary" ]; then
    GITHUB_STEP_SUMMARY="$step_summary" "$PYTHON" "${merge[@]}" || status=$?
else
    "$PYTHON" "${merge[@]}" || status=$?
fi
echo "== ci_local.sh: merge exit status $status; files in $out"
exit "$status"
