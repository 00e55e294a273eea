#!/usr/bin/env bash
# A/B of two et-bench binaries (in-process: the runtime, kernels and backends alone) on
# the same models, interleaved (A B A B ...), one compute thread, ROUNDS rounds of
# ITERATIONS calls each. Prints "MODEL A|B MEDIAN_US" per run, then per model the
# median of each side's medians. What a change to the runtime costs per call (e.g.
# the profiling hooks with profiling off: docs/profiling.md).
#
# Usage: benchmarks/ab_et_bench.sh OLD_ET_BENCH NEW_ET_BENCH [ROUNDS [ITERATIONS]]
#   (an old et-bench: git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build
#    -G Ninja && ninja -C /tmp/old/build et-bench)
# Env: AB_MODELS="add.pte mlp.pte ..." (fixtures in tests/models; these by default)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 rounds=${3:-5} iterations=${4:-2000}
models=${AB_MODELS:-add.pte mlp.pte mlp_xnnpack.pte transformer_block.pte}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for model in $models; do
  for ((round = 1; round <= rounds; round++)); do
    for which in A B; do
      bin=$old
      [[ $which == B ]] && bin=$new
      median=$(ET_NUM_THREADS=1 "$bin" "tests/models/$model" --iterations "$iterations" \
        --warmup $((iterations / 10)) |
        python3 -c "import json, sys; print(json.load(sys.stdin)['median_ms'] * 1000)")
      echo "$model $which $median" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    model, which, us = line.split()
    runs[model, which].append(float(us))
for model in dict.fromkeys(m for m, _ in runs):
    a, b = statistics.median(runs[model, "A"]), statistics.median(runs[model, "B"])
    print(f"{model}: A {a:.3f} us, B {b:.3f} us, B/A {b / a:.3f}")
PY
