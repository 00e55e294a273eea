"""docs/kernels.md's coverage table is current: generated from ExecuTorch's portable
operator list (tests/models/executorch_operators.json), the kernels et-run registers and
the fixture programs, and every ExecuTorch operator without a kernel has a stated
reason (tools/kernel_coverage.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import BUILD, ROOT


def test_coverage_table_is_current():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "kernel_coverage.py"), "--check"],
                            capture_output=True, text=True, env={**os.environ, "ET_BUILD_DIR": str(BUILD)})
    assert result.returncode == 0, result.stderr
