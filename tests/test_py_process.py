"""What the Python client costs a process: the proof the mission exists for (a client
process maps no torch, no runtime, kernels, backends or XNNPACK), no numpy needed,
memory that does not grow, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

from conftest import MODELS

# torch and numpy are made unimportable in these children: the client must not need them.
BLOCK = textwrap.dedent("""
    import sys
    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("torch", "numpy", "executorch"):
                raise ImportError(f"{name} is blocked in this test")
    sys.meta_path.insert(0, _Block())
""")


def child(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=300)


def test_a_client_process_maps_no_torch_runtime_or_xnnpack(daemon_socket):
    result = child("""
        import array, json, re, sys, time
        start = time.perf_counter()
        import etclient
        import_ms = (time.perf_counter() - start) * 1e3
        program = etclient.Runtime(sys.argv[1]).load_program(sys.argv[2])
        x = memoryview(array.array("f", [float(i) for i in range(6)])).cast("B").cast("f", (2, 3))
        out = program.load_method().execute([x, x])[0]
        assert memoryview(out).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]], memoryview(out).tolist()
        libs = sorted({line.split()[-1] for line in open("/proc/self/maps") if ".so" in line})
        forbidden = [lib for lib in libs if re.search(
            r"torch|libc10|executorch|_portable_lib|xnnpack|pthreadpool|libet_(runtime|kernels|backend)", lib, re.I)]
        print(json.dumps({"import_ms": import_ms, "forbidden": forbidden, "libs": libs,
                          "modules": sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "numpy"))}))
    """, daemon_socket, str(MODELS / "add.pte"))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["forbidden"] == [], f"the client process mapped {report['forbidden']}"
    assert report["modules"] == []
    assert any("_native" in lib for lib in report["libs"]), "the check must see the extension itself"
    print(f"import etclient: {report['import_ms']:.1f} ms; {len(report['libs'])} shared objects mapped")


def test_the_check_would_catch_a_forbidden_library(daemon_socket):
    # The same scan, in a process that maps one on purpose (XNNPACK from Debian): it
    # must be found, so the test above cannot pass by reading nothing.
    result = child("""
        import ctypes, ctypes.util, re
        ctypes.CDLL(ctypes.util.find_library("XNNPACK") or "libXNNPACK.so")
        libs = {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}
        print([lib for lib in libs if re.search(r"xnnpack", lib, re.I)])
    """)
    assert result.returncode == 0, result.stderr
    assert "XNNPACK" in result.stdout or "xnnpack" in result.stdout.lower()


def test_loops_over_execute_and_load_do_not_grow_memory(daemon_socket):
    result = child("""
        import array, json, sys
        import etclient

        def rss_kb():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])

        runtime = etclient.Runtime(sys.argv[1])
        program = runtime.load_program(sys.argv[2])
        method = program.load_method()
        x = memoryview(array.array("f", [0.5] * 64)).cast("B").cast("f", (4, 16))
        for _ in range(300):                       # warm up: arena, caches
            method.execute([x])
        start = rss_kb()
        for _ in range(3000):
            out = method.execute([x])
            method.set_inputs([x]); method.execute(); method.outputs()
        after_execute = rss_kb()
        for _ in range(300):
            m = program.new_method()
            m.execute([x])
            del m
            p = runtime.load_program(sys.argv[2])
            del p
        after_load = rss_kb()
        print(json.dumps({"start": start, "after_execute": after_execute, "after_load": after_load}))
    """, daemon_socket, str(MODELS / "mlp.pte"))
    assert result.returncode == 0, result.stderr
    kb = json.loads(result.stdout)
    print(f"client RSS: {kb}")
    assert kb["after_execute"] - kb["start"] < 4096, kb  # 6000 calls: less than 4 MiB
    assert kb["after_load"] - kb["after_execute"] < 4096, kb


def test_the_command_line_runs_without_numpy(daemon_socket, tmp_path):
    info = child("import sys, runpy; sys.argv = ['etclient', *sys.argv[1:]]; "
                 "runpy.run_module('etclient', run_name='__main__')",
                 "--socket", daemon_socket, "info", str(MODELS / "channels_last.pte"))
    assert info.returncode == 0, info.stderr
    assert "input 0: float32 [" in info.stdout and "dim_order [0, 2, 3, 1]" in info.stdout, info.stdout
    run = child("import sys, runpy; sys.argv = ['etclient', *sys.argv[1:]]; "
                "runpy.run_module('etclient', run_name='__main__')",
                "--socket", daemon_socket, "run", str(MODELS / "mlp.pte"),
                "--input", str(MODELS / "mlp/forward.in0.npy"), "--output-dir", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "output 0: float32" in run.stdout, run.stdout
    np.testing.assert_allclose(np.load(tmp_path / "0.npy"), np.load(MODELS / "mlp/forward.out0.npy"),
                               rtol=1e-5, atol=1e-6)
    bad = child("import sys, runpy; sys.argv = ['etclient', *sys.argv[1:]]; "
                "runpy.run_module('etclient', run_name='__main__')",
                "--socket", daemon_socket, "run", str(MODELS / "mlp.pte"), "--input", str(MODELS / "add/forward.in0.npy"))
    assert bad.returncode == 1 and "input 0" in bad.stderr, bad.stderr
