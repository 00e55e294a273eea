#!/usr/bin/env bash
# A/B of two et-serverd binaries on the same client: robot_node (free-running) over each
# transport, the daemons interleaved (A B, B A, A B ...), ROUNDS rounds of SECONDS each.
# With CLIENTS="1 4 16", N robot_node processes call at once in one shared window (every
# node connected, loaded and warm before it opens): the daemon side of the throughput
# scenario (benchmarks/suite/throughput.py) without the Python clients and the peer.
# Prints one JSON line per run, prefixed with A or B: calls per second of all clients
# together and the worst client's p50 and p99. What a change costs per call (e.g. the
# metrics' CallScope: benchmarks/results/archive/fast_path.md) or when calls overlap.
#
# Usage: benchmarks/ab_daemons.sh OLD_DAEMON NEW_DAEMON [ROUNDS [SECONDS]]
#   Env: MODELS (default "add"), TRANSPORTS (default "fast grpc"), CLIENTS (default 1)
#   (an old daemon: git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build
#    -G Ninja && ninja -C /tmp/old/build et-serverd)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 rounds=${3:-3} seconds=${4:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for model in ${MODELS:-add}; do
  for n in ${CLIENTS:-1}; do
    for ((round = 1; round <= rounds; round++)); do
      # A B, then B A: the daemon started second in a pair ran up to 10% slower with
      # either binary (single fast-path client, 2 cores), so each goes first as often.
      order="A B"
      ((round % 2 == 0)) && order="B A"
      for which in $order; do
        bin=$old
        [[ $which == B ]] && bin=$new
        "$bin" --socket "$dir/s.sock" --log-level warn &
        pid=$!
        for _ in $(seq 600); do [[ -S $dir/s.sock ]] && break; sleep 0.05; done
        for transport in ${TRANSPORTS:-fast grpc}; do
          start_at=$(python3 -c "import time; print(f'{time.time() + 1.0 + 0.15 * $n:.3f}')")
          nodes=()
          for ((i = 0; i < n; i++)); do
            build/client/cpp/robot_node "tests/models/$model.pte" --socket "$dir/s.sock" \
              --transport "$transport" --hz 0 --seconds "$seconds" --start-at "$start_at" \
              >"$dir/node$i.json" 2>&1 &
            nodes+=($!)
          done
          wait "${nodes[@]}"
          python3 - "$which" "$model" "$transport" "$n" "$dir" <<'PY'
import json, sys
which, model, transport, n, d = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
runs = [json.loads(open(f"{d}/node{i}.json").read().strip().splitlines()[-1]) for i in range(n)]
print(which, json.dumps({"model": model, "transport": transport, "clients": n,
                         "calls_per_s": round(sum(r["calls_per_s"] for r in runs)),
                         "p50_us": max(r["p50_us"] for r in runs), "p99_us": max(r["p99_us"] for r in runs)}))
PY
        done
        kill "$pid"
        wait "$pid" 2>/dev/null || true
      done
    done
  done
done
