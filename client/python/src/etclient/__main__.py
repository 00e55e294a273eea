"""The etclient command line.

    python -m etclient info MODEL.pte                  what each method takes and returns
    python -m etclient run MODEL.pte --input x.npy     run a method, save or print outputs
    python -m etclient run-as-executorch script.py ARGS...   (or -m module ARGS...)
        run unmodified code written against executorch.runtime or portable_lib on
        et-serverd: those imports resolve to etclient (child processes too)

They talk to et-serverd at --socket, else $ETSERVER_SOCKET, else the default socket.
Need neither numpy nor torch.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import time

import etclient
from etclient import _npy


def _info(args: argparse.Namespace) -> int:
    program = etclient.Runtime.get(args.socket).load_program(args.model)
    print(f"{args.model}: sha256 {program.sha256}")
    for name in sorted(program.method_names):
        meta = program.metadata(name)
        print(f"method {name}:")
        for kind, count, kind_of, tensor_of in (
                ("input", meta.num_inputs(), meta.input_kind, meta.input_tensor_meta),
                ("output", meta.num_outputs(), meta.output_kind, meta.output_tensor_meta)):
            for i in range(count):
                if kind_of(i) != "tensor":
                    print(f"  {kind} {i}: {kind_of(i)}")
                    continue
                t = tensor_of(i)
                planned = "planned" if t.is_memory_planned() else "unplanned (zero copy)"
                dynamic = ", dynamic" if t.is_dynamic() else ""
                print(f"  {kind} {i}: {t.dtype_name()} {list(t.sizes())} dim_order {list(t.dim_order())} "
                      f"{t.nbytes()} bytes, {planned}{dynamic}, {t.device()}")
        if meta.backends():
            print(f"  backends: {', '.join(meta.backends())}")
    return 0


def _load_input(path: str, method: etclient.Method, index: int):
    descr, shape, data = _npy.read(path)
    meta = method.metadata
    info = meta.input_tensor_meta(index) \
        if index < meta.num_inputs() and meta.input_kind(index) == "tensor" else None
    if info is None and shape == ():
        value = struct.unpack(_npy.DESCRS[descr][0], data)[0]
        kind = meta.input_kind(index) if index < meta.num_inputs() else "tensor"
        return {"int": int, "float": float, "bool": bool}.get(kind, lambda v: v)(value)
    if info is not None and info.dtype_name() == "bfloat16" and descr == "<u2":
        return bytearray(data)  # bit patterns: the raw-bytes rule takes them as bfloat16
    view = memoryview(bytearray(data)).cast("B").cast(_npy.DESCRS[descr][0], shape) \
        if shape else memoryview(bytearray(data)).cast(_npy.DESCRS[descr][0], ())
    return view


def _summary(value) -> str:
    if not isinstance(value, etclient.Tensor):
        return repr(value)
    fmt = "H" if value.dtype_name == "bfloat16" else memoryview(value).format
    raw = value.to_bytes()
    count = min(8, len(raw) // value.itemsize) if value.itemsize else 0
    head = struct.unpack(f"<{count}{fmt}", raw[:count * value.itemsize]) if count else ()
    more = " ..." if value.nbytes > count * value.itemsize else ""
    shown = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in head)
    return f"{value.dtype_name} {list(value.shape)} [{shown}{more}]"


def _run(args: argparse.Namespace) -> int:
    runtime = etclient.Runtime.get(args.socket)
    program = runtime.load_program(args.model)
    method = program.load_method(args.method)
    inputs = [_load_input(p, method, i) for i, p in enumerate(args.input)]
    start = time.perf_counter()
    outputs = method.execute(inputs)
    elapsed = (time.perf_counter() - start) * 1e3
    print(f"{args.model} {args.method}: {len(outputs)} output(s) in {elapsed:.3f} ms")
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
    for i, value in enumerate(outputs):
        line = f"  output {i}: {_summary(value)}"
        if args.output_dir and isinstance(value, etclient.Tensor):
            path = os.path.join(args.output_dir, f"{i}.npy")
            _npy.write(path, _npy.DESCR_OF[value.dtype_name], tuple(value.shape), value.to_bytes())
            line += f" -> {path}"
        print(line)
    return 0


def _run_as_executorch(argv: list) -> int:
    """Runs `script.py ARGS` or `-m module ARGS` as `python` would, with the zero-change
    mode on here and in child processes (ETCLIENT_AS_EXECUTORCH=1)."""
    import runpy
    from etclient import _as_executorch
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print("usage: python -m etclient run-as-executorch (script.py | -m module) [args...]\n\n"
              "Runs the script with `import executorch.runtime` and `from "
              "executorch.extension.pybindings import portable_lib` resolving to etclient, in "
              "this process and its children.", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    os.environ[_as_executorch.ENV] = "1"
    _as_executorch.install()
    if argv[0] == "-m":
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "run-as-executorch":
        try:
            return _run_as_executorch(argv[1:])
        except SystemExit as e:  # the script's own exit status
            if isinstance(e.code, int) or e.code is None:
                return e.code or 0
            print(e.code, file=sys.stderr)
            return 1
    parser = argparse.ArgumentParser(prog="python -m etclient", description=__doc__.split("\n")[0])
    parser.add_argument("--socket", help="et-serverd's socket (default: $ETSERVER_SOCKET or the default)")
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="what each method of a program takes and returns")
    info.add_argument("model")
    run = sub.add_parser("run", help="run a method on .npy inputs")
    run.add_argument("model")
    run.add_argument("--method", default="forward")
    run.add_argument("--input", action="append", default=[], help="an input .npy file (repeat, in order)")
    run.add_argument("--output-dir", help="save each output as DIR/N.npy (bfloat16 as uint16 bits)")
    sub.add_parser("run-as-executorch", help="run a script written against ExecuTorch's Python "
                   "APIs on et-serverd, unmodified (script.py ARGS or -m module ARGS)")
    args = parser.parse_args(argv)
    try:
        return _info(args) if args.command == "info" else _run(args)
    except (etclient.Error, OSError, ValueError, TypeError) as e:
        print(f"etclient: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
