#!/usr/bin/env bash
# A/B of two build trees, each daemon with its own client: robot_node at a fixed rate
# through each tree's et-serverd, both transports, runs interleaved (A B, B A, ...). For
# changes on both sides of the fast path (benchmarks/ab_daemons.sh keeps one client).
# Prints one robot_node JSON line per run, prefixed with A or B.
#
# Usage: benchmarks/ab_trees.sh OLD_ROOT NEW_ROOT ROUNDS SECONDS HZ MODEL...
#   A ROOT is a checkout with build/ built (et-serverd, robot_node), e.g.
#   git worktree add /tmp/old REV && scripts/build  (in /tmp/old)
#   Under load: scripts/busy benchmarks/ab_trees.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 rounds=$3 seconds=$4 hz=$5
shift 5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for model in "$@"; do
  for transport in fast grpc; do
    for ((round = 1; round <= rounds; round++)); do
      order="A B"
      ((round % 2 == 0)) && order="B A"
      for which in $order; do
        root=$old
        [[ $which == B ]] && root=$new
        "$root/build/server/et-serverd" --socket "$dir/s.sock" --log-level warn &
        pid=$!
        for _ in $(seq 600); do [[ -S $dir/s.sock ]] && break; sleep 0.05; done
        out=$("$root/build/client/cpp/robot_node" "tests/models/$model.pte" --socket "$dir/s.sock" \
          --transport "$transport" --hz "$hz" --seconds "$seconds" | tail -1)
        echo "$which $out"
        kill "$pid"
        wait "$pid" || true
      done
    done
  done
done
