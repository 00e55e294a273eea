#!/usr/bin/env bash
# A/B of two et-serverd binaries on the same client: robot_node (add, free-running) over
# the fast path and gRPC, the daemons interleaved (A B A B ...), ROUNDS rounds of
# SECONDS each. Prints one JSON line per run, prefixed with A or B. What a change costs
# per call (e.g. the metrics' CallScope: benchmarks/results/fast_path.md).
#
# Usage: benchmarks/ab_daemons.sh OLD_DAEMON NEW_DAEMON [ROUNDS [SECONDS]]
#   (an old daemon: git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build
#    -G Ninja && ninja -C /tmp/old/build et-serverd)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 rounds=${3:-3} seconds=${4:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for ((round = 1; round <= rounds; round++)); do
  for which in A B; do
    bin=$old
    [[ $which == B ]] && bin=$new
    "$bin" --socket "$dir/s.sock" --log-level warn &
    pid=$!
    for _ in $(seq 200); do [[ -S $dir/s.sock ]] && break; sleep 0.05; done
    sleep 0.3
    for transport in fast grpc; do
      echo "$which $(build/client/cpp/robot_node tests/models/add.pte --socket "$dir/s.sock" \
        --transport "$transport" --hz 0 --seconds "$seconds" 2>&1 | tail -1)"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
done
