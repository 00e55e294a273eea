"""Fuzz of the Python client's input space, in a child process so that a crash (the
process ending) is a failure rather than the end of the test run."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import MODELS, ROOT


def test_every_fuzzed_input_runs_or_raises(daemon_socket):
    script = ROOT / "tests" / "support" / "py_input_fuzz.py"
    for seed in (1, 2):
        result = subprocess.run([sys.executable, str(script), daemon_socket, str(MODELS), str(seed), "5000"],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"seed {seed}: exit {result.returncode}\n{result.stderr[-3000:]}"
        counts = re.search(r"fuzzed (\d+) cases: (\d+) ran, (\d+) refused", result.stdout)
        assert counts, result.stdout
        assert int(counts.group(2)) > 0 and int(counts.group(3)) > 0, result.stdout  # both kinds seen
        print(result.stdout.strip())
