#!/usr/bin/env python3
"""Exports the test fixtures in tests/models/ with the real ExecuTorch exporter.

For every model: the program (.pte, or .bpte for a bundled program), its inputs, and
the outputs eager PyTorch computes on them, as .npy files; manifest.json lists them.
Each method is also run once through ExecuTorch's own runtime (executorch.runtime)
and the agreement is recorded, so a fixture that ExecuTorch itself cannot run is
visible in the manifest.

Runs only in the export environment (tests/models/README.md), never in CI.

  python export.py                    export everything, rewrite manifest.json
  python export.py --only mlp,zoo_add  export a subset; other manifest entries are kept
  python export.py --check            export into a scratch directory and compare
                                      every file with the committed one
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.metadata
import json
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import torch
from torch.utils import _pytree as pytree

from fixture_models import MethodSpec, ModelSpec, model_specs
from zoo_ops import ZooOp, stateful_zoo_specs, zoo_ops

HERE = Path(__file__).resolve().parent

# Tolerance per output dtype: float32 exact up to summation order, half types a few ulps.
TOLERANCE = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (4e-2, 2e-2),
}

DTYPE_NAMES = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.float64: "float64", torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16",
    torch.int32: "int32", torch.int64: "int64", torch.bool: "bool",
}

SCALAR_TYPE_NAMES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16",
                     6: "float32", 7: "float64", 11: "bool", 15: "bfloat16"}


def module_for(op: ZooOp, inputs: tuple) -> torch.nn.Module:
    """A fresh module whose parameters have the dtype of the first floating input, so a
    float64 variant of conv2d runs in float64 rather than mixing dtypes."""
    module = op.module()
    first = next((x for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()), None)
    if first is not None and first.dtype != torch.float32:
        module = module.to(first.dtype)
    return module


def zoo_specs() -> list[ModelSpec]:
    """Turns each ZooOp into a program with one method per variant."""
    specs = []
    for op in zoo_ops():
        methods = [MethodSpec(variant, module_for(op, inputs), inputs)
                   for variant, inputs in op.variants.items()]
        spec = ModelSpec(f"zoo_{op.name}", methods, op.exercises, zoo=True,
                         preserve=op.preserve, edge_config=op.edge_config)
        spec.loose = op.loose  # type: ignore[attr-defined]
        specs.append(spec)
    return specs + stateful_zoo_specs()


def all_specs() -> list[ModelSpec]:
    return model_specs() + zoo_specs()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """bfloat16 has no numpy dtype: its bits are stored as uint16 (dtype in the manifest)."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def save_value(value, path: Path) -> tuple[str, str]:
    """Writes one input or output; returns (kind, dtype name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(value, torch.Tensor):
        np.save(path, to_numpy(value))
        return "tensor", DTYPE_NAMES[value.dtype]
    if isinstance(value, bool):
        np.save(path, np.array(value, dtype=np.bool_))
        return "bool", "bool"
    if isinstance(value, int):
        np.save(path, np.array(value, dtype=np.int64))
        return "int", "int64"
    if isinstance(value, float):
        np.save(path, np.array(value, dtype=np.float64))
        return "float", "float64"
    raise TypeError(f"cannot store a fixture value of type {type(value).__name__}")


def clone_inputs(inputs: tuple) -> tuple:
    return tuple(x.clone(memory_format=torch.preserve_format) if isinstance(x, torch.Tensor) else x
                 for x in inputs)


def tolerance(outputs: list, loose: float) -> tuple[float, float]:
    atol, rtol = 0.0, 0.0
    for o in outputs:
        a, r = TOLERANCE.get(o.dtype, (0.0, 0.0))
        atol, rtol = max(atol, a * loose), max(rtol, r * loose)
    return atol, rtol


def run_eager(method: MethodSpec) -> list[dict]:
    """Runs the first call and every subsequent call on one copy of the module.

    Returns one record per call: inputs as passed, flat outputs, inputs the call wrote.
    """
    module = copy.deepcopy(method.module)
    calls = []
    with torch.no_grad():
        for inputs in [method.inputs, *method.subsequent_calls]:
            before = clone_inputs(inputs)
            after = clone_inputs(inputs)
            out = module(*after)
            flat, _ = pytree.tree_flatten(out)
            flat = [o.clone() if isinstance(o, torch.Tensor) else o for o in flat]
            mutated = {i: a for i, (b, a) in enumerate(zip(before, after))
                       if isinstance(b, torch.Tensor) and not torch.equal(b, a)}
            calls.append({"inputs": before, "outputs": flat, "mutated": mutated})
    return calls


def lower(spec: ModelSpec):
    """Exports every method of a spec into one ExecuTorch program manager."""
    if getattr(spec, "program", None) is not None:  # made by spec.prepare
        return spec.program  # type: ignore[attr-defined]
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    programs = {}
    for m in spec.methods:
        trace = m.trace_inputs if m.trace_inputs is not None else m.inputs
        programs[m.name] = torch.export.export(copy.deepcopy(m.module), clone_inputs(trace),
                                               dynamic_shapes=m.dynamic_shapes, strict=False)
        if spec.external_data and spec.delegated:
            # ExecuTorch's way to move a delegate's weights out (as its LLM export flow
            # does): tag the unlifted graph's constants, then export that again.
            from executorch.exir.passes.external_constants_pass import (
                delegate_external_constants_pass_unlifted)

            unlifted = programs[m.name].module()
            delegate_external_constants_pass_unlifted(unlifted, gen_tag_fn=lambda _: spec.name)
            programs[m.name] = torch.export.export(unlifted, clone_inputs(trace),
                                                   dynamic_shapes=m.dynamic_shapes, strict=False)
        m.stateful = bool(programs[m.name].graph_signature.buffers_to_mutate)  # type: ignore[attr-defined]
    partitioner = None
    if spec.delegated:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        partitioner = [XnnpackPartitioner()]
    compile_config = None
    if spec.preserve or spec.edge_config:
        from executorch.exir import EdgeCompileConfig

        compile_config = EdgeCompileConfig(_check_ir_validity=False,
                                           _core_aten_ops_exception_list=list(spec.preserve),
                                           preserve_ops=list(spec.preserve), **spec.edge_config)
    edge = to_edge_transform_and_lower(programs, partitioner=partitioner,
                                       compile_config=compile_config)
    for m in spec.methods:  # export may leave mutations in place (index_put_) until here
        mutated = edge.exported_program(m.name).graph_signature.buffers_to_mutate
        m.stateful = m.stateful or bool(mutated)  # type: ignore[attr-defined]
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(alloc_graph_input=spec.plan_io,
                                                alloc_graph_output=spec.plan_io),
        external_constants=(lambda _: spec.name) if spec.external_data else False,
        emit_mutable_buffer_names=spec.buffer_names)
    return edge.to_executorch(config)


def write_external_data(pm, spec: ModelSpec, out: Path) -> Path | None:
    """Writes the spec's .ptd as NAME.ptd; None for programs without external data."""
    if not spec.external_data:
        return None
    with tempfile.TemporaryDirectory() as scratch:
        pm.write_tensor_data_to_file(scratch)
        written = sorted(Path(scratch).glob("*.ptd"))
        if len(written) != 1:
            raise ValueError(f"{spec.name}: expected one .ptd, the exporter wrote {written}")
        path = out / f"{spec.name}.ptd"
        shutil.copyfile(written[0], path)
    return path


def plan_facts(plan) -> dict:
    """What the exported program itself says about one method."""

    def tensor_facts(indices):
        dtypes, orders = [], []
        for i in indices:
            val = plan.values[i].val
            if hasattr(val, "dim_order"):
                dtypes.append(SCALAR_TYPE_NAMES.get(int(val.scalar_type), str(val.scalar_type)))
                orders.append(list(val.dim_order))
            else:
                dtypes.append(type(val).__name__.lower())
                orders.append(None)
        return dtypes, orders

    in_dtypes, in_orders = tensor_facts(plan.inputs)
    out_dtypes, out_orders = tensor_facts(plan.outputs)
    return {
        "operators": sorted({o.name + ("." + o.overload if o.overload else "") for o in plan.operators}),
        "delegates": sorted({d.id for d in plan.delegates}),
        "program_input_dtypes": in_dtypes,
        "input_dim_orders": in_orders,
        "program_output_dtypes": out_dtypes,
        "output_dim_orders": out_orders,
    }


def check_with_executorch(buffer: bytes, method: MethodSpec, calls: list[dict], atol, rtol,
                          data_path: Path | None = None) -> str:
    """Runs the method through ExecuTorch's own runtime and compares with eager."""
    try:
        from executorch.runtime import Runtime

        loaded = Runtime.get().load_program(buffer, data_path=data_path).load_method(method.name)
        worst = 0.0
        for call in calls:
            got = loaded.execute(list(clone_inputs(call["inputs"])))
            if len(got) != len(call["outputs"]):
                return f"mismatch: {len(got)} outputs, eager has {len(call['outputs'])}"
            for g, want in zip(got, call["outputs"]):
                if not isinstance(want, torch.Tensor):
                    continue
                if g.shape != want.shape or g.dtype != want.dtype:
                    return f"mismatch: got {g.dtype}{list(g.shape)}, eager {want.dtype}{list(want.shape)}"
                if not torch.allclose(g.double(), want.double(), atol=atol, rtol=rtol, equal_nan=True):
                    diff = (g.double() - want.double()).abs().nan_to_num(0.0).max().item()
                    return f"mismatch: max abs difference {diff:.3g} (atol {atol}, rtol {rtol})"
                if want.numel() and want.is_floating_point():
                    finite = torch.isfinite(want)
                    if finite.any():
                        worst = max(worst, (g.double() - want.double())[finite].abs().max().item())
        return "match" if worst == 0.0 else f"match (max abs difference {worst:.3g})"
    except Exception as e:  # noqa: BLE001 - recorded in the manifest, not fatal
        return f"error: {str(e).splitlines()[0][:300] if str(e) else type(e).__name__}"


def align_outputs(calls: list[dict], plan) -> None:
    """Matches eager outputs to the program's outputs.

    A method that writes a user input in place returns that input as an extra leading
    output (same value index as the input); its expected value is the input after the
    eager call.
    """
    for call in calls:
        extra = len(plan.outputs) - len(call["outputs"])
        if extra == 0:
            continue
        leading = []
        for value_index in plan.outputs[:extra]:
            if value_index not in plan.inputs:
                raise ValueError(f"program has {extra} output(s) eager does not explain")
            position = plan.inputs.index(value_index)
            if position not in call["mutated"]:
                raise ValueError(f"program returns input {position}, which eager did not write")
            leading.append(call["mutated"][position])
        call["outputs"] = leading + call["outputs"]


def write_bundled(pm, spec: ModelSpec, calls_by_method: dict, path: Path) -> None:
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer

    def expected(outputs, delta):  # spec.bundled_perturb: a deliberately wrong case
        if not delta:
            return list(outputs)
        return [o + delta if isinstance(o, torch.Tensor) and o.is_floating_point() else o
                for o in outputs]

    suites = []
    for m in spec.methods:
        perturb = spec.bundled_perturb.get(m.name, {})
        cases = [MethodTestCase(inputs=list(c["inputs"]),
                                expected_outputs=expected(c["outputs"], perturb.get(k)))
                 for k, c in enumerate(calls_by_method[m.name])]
        suites.append(MethodTestSuite(method_name=m.name, test_cases=cases))
    path.write_bytes(serialize_from_bundled_program_to_flatbuffer(BundledProgram(pm, suites)))


def export_model(spec: ModelSpec, out: Path) -> dict:
    calls_by_method = {m.name: run_eager(m) for m in spec.methods}
    pm = lower(spec)
    suffix = ".bpte" if spec.bundled else ".pte"
    program_path = out / f"{spec.name}{suffix}"
    if spec.bundled:
        write_bundled(pm, spec, calls_by_method, program_path)
    else:
        program_path.write_bytes(pm.buffer)
    data_path = write_external_data(pm, spec, out)
    plans = {p.name: p for p in pm.executorch_program.execution_plan}
    for m in spec.methods:
        align_outputs(calls_by_method[m.name], plans[m.name])
    loose = getattr(spec, "loose", 1.0)

    methods = []
    for m in spec.methods:
        calls = calls_by_method[m.name]
        first = calls[0]
        atol, rtol = tolerance([o for o in first["outputs"] if isinstance(o, torch.Tensor)], loose)
        atol = m.atol if m.atol is not None else atol
        rtol = m.rtol if m.rtol is not None else rtol

        def store(call, prefix):
            ins, kinds, in_dtypes = [], [], []
            for i, v in enumerate(call["inputs"]):
                rel = f"{spec.name}/{prefix}.in{i}.npy"
                kind, dtype = save_value(v, out / rel)
                ins.append(rel), kinds.append(kind), in_dtypes.append(dtype)
            exp, out_dtypes = [], []
            for i, v in enumerate(call["outputs"]):
                rel = f"{spec.name}/{prefix}.out{i}.npy"
                out_dtypes.append(save_value(v, out / rel)[1])
                exp.append(rel)
            mutated = {}
            for i, v in call["mutated"].items():
                rel = f"{spec.name}/{prefix}.in{i}.after.npy"
                save_value(v, out / rel)
                mutated[str(i)] = rel
            record = {"inputs": ins, "expected": exp}
            if mutated:
                record["mutated_inputs"] = mutated
            return record, kinds, in_dtypes, out_dtypes

        first_record, kinds, in_dtypes, out_dtypes = store(first, m.name)
        entry = {"name": m.name, **first_record, "input_kinds": kinds, "input_dtypes": in_dtypes,
                 "expected_dtypes": out_dtypes, "atol": atol, "rtol": rtol,
                 "stateful": getattr(m, "stateful", False)}
        entry.update(plan_facts(plans[m.name]))
        if len(calls) > 1:
            entry["subsequent_calls"] = [store(c, f"{m.name}.call{k}")[0] for k, c in enumerate(calls[1:], 1)]
        entry["executorch_runtime"] = (
            "not run (bundled program)" if spec.bundled else
            check_with_executorch(pm.buffer, m, calls, atol, rtol, data_path))
        methods.append(entry)

    return {
        "name": spec.name,
        "pte": program_path.name,
        **({"ptd": data_path.name, "ptd_sha256": sha256(data_path)} if data_path else {}),
        "delegated": spec.delegated,
        "zoo": spec.zoo,
        "bundled": spec.bundled,
        "planned_io": spec.plan_io,
        "exercises": spec.exercises,
        "operators": sorted({op for m in methods for op in m["operators"]}),
        "bytes": program_path.stat().st_size,
        "sha256": sha256(program_path),
        **({"notes": spec.notes} if spec.notes else {}),
        "methods": methods,
    }


def export_with_refusals(spec: ModelSpec, out: Path, refusals: list) -> dict | None:
    """Exports a spec; a method the exporter or eager refuses is dropped and recorded.

    Zoo programs carry many dtype variants, and some are legitimately refused by
    torch or by ExecuTorch's dtype checks; the refusal is part of the record.
    """
    if getattr(spec, "prepare", None):  # programs made by a flow of their own
        try:
            spec.prepare(spec)  # type: ignore[attr-defined]
        except Exception as e:  # noqa: BLE001
            refusals.append({"model": spec.name, "method": "*", "error": first_line(e)})
            traceback.print_exc()
            return None
    methods = list(spec.methods)
    while methods:
        try:
            trial = copy.copy(spec)
            trial.methods = methods
            return export_model(trial, out)
        except Exception as e:  # noqa: BLE001
            bad = find_bad_method(spec, methods)
            if bad is None or not spec.zoo:
                refusals.append({"model": spec.name, "method": "*", "error": first_line(e)})
                traceback.print_exc()
                return None
            refusals.append({"model": spec.name, "method": bad[0].name, "error": bad[1]})
            methods = [m for m in methods if m is not bad[0]]
    return None


def first_line(e: Exception) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300] if text else ''}"


def find_bad_method(spec: ModelSpec, methods: list[MethodSpec]):
    """Exports methods one by one to find the first that fails alone."""
    for m in methods:
        try:
            single = copy.copy(spec)
            single.methods = [m]
            run_eager(m)
            lower(single)
        except Exception as e:  # noqa: BLE001
            return m, first_line(e)
    return None


def write_executorch_operators(out: Path) -> None:
    """ExecuTorch's own operator list (its portable kernels and prim ops, as its Python
    runtime registers them), for docs/kernels.md's coverage table
    (tools/kernel_coverage.py), which is built without torch."""
    from executorch.extension.pybindings import portable_lib

    # Custom-op libraries (llama::, preprocess::) add their kernels to this list once a
    # process imports them; only the portable library's namespaces are recorded.
    portable = ("aten::", "dim_order_ops::", "et_copy::", "executorch_prim::")
    record = {"executorch": importlib.metadata.version("executorch"),
              "source": "executorch.extension.pybindings.portable_lib._get_operator_names(), "
                        "namespaces " + ", ".join(portable),
              "operators": sorted({op for op in portable_lib._get_operator_names()
                                   if op.startswith(portable)})}
    (out / "executorch_operators.json").write_text(json.dumps(record, indent=1) + "\n")


def manifest_header() -> dict:
    return {
        "exporter": {
            "torch": torch.__version__,
            "executorch": importlib.metadata.version("executorch"),
            "torchvision": importlib.metadata.version("torchvision"),
            "python": sys.version.split()[0],
        },
        "generated_by": "tests/models/export.py",
        "conventions": {
            "paths": "relative to tests/models/",
            "bfloat16": "stored as uint16 bit patterns; the *_dtypes lists say bfloat16",
            "layout": "every .npy holds logical values in C order; input_dim_orders gives the "
                      "dim order the method expects",
            "subsequent_calls": "further calls on the SAME method instance, in order, after the first",
            "stateful": "the method mutates buffers: a call's outputs depend on the calls before it",
            "mutated_inputs": "input index -> the values that input holds after the call",
            "executorch_runtime": "what ExecuTorch's own runtime gave on the same program",
        },
    }


def remove_old_outputs(out: Path) -> None:
    for p in list(out.glob("*.pte")) + list(out.glob("*.bpte")) + list(out.glob("*.ptd")):
        p.unlink()
    for d in out.iterdir():
        if d.is_dir() and any(d.glob("*.npy")) and all(f.suffix == ".npy" for f in d.iterdir()):
            shutil.rmtree(d)


def export_all(out: Path, only: set[str] | None) -> dict:
    specs = [s for s in all_specs() if only is None or s.name in only]
    if only:
        unknown = only - {s.name for s in all_specs()}
        if unknown:
            sys.exit(f"export.py: unknown model(s): {', '.join(sorted(unknown))}")
    old = {}
    manifest_path = out / "manifest.json"
    if only and manifest_path.exists():
        previous = json.loads(manifest_path.read_text())
        old = {m["name"]: m for m in previous["models"]}
        refusals = [r for r in previous.get("refused", []) if r["model"] not in only]
    else:
        remove_old_outputs(out)
        refusals = []
    entries = dict(old)
    start = time.time()
    for n, spec in enumerate(specs, 1):
        t0 = time.time()
        shutil.rmtree(out / spec.name, ignore_errors=True)
        entry = export_with_refusals(spec, out, refusals)
        if entry is not None:
            entries[spec.name] = entry
            verdicts = {m["name"]: m["executorch_runtime"] for m in entry["methods"]}
            print(f"[{n}/{len(specs)}] {spec.name}: {len(entry['methods'])} method(s), "
                  f"{time.time() - t0:.1f}s, executorch.runtime: {verdicts}", flush=True)
        else:
            entries.pop(spec.name, None)
            print(f"[{n}/{len(specs)}] {spec.name}: REFUSED", flush=True)
    order = [s.name for s in all_specs()]
    manifest = manifest_header()
    manifest["models"] = [entries[name] for name in order if name in entries]
    manifest["refused"] = refusals
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    write_executorch_operators(out)
    print(f"export.py: {len(manifest['models'])} programs in {out} ({time.time() - start:.0f}s), "
          f"{len(refusals)} refusal(s) recorded")
    return manifest


def check(only: set[str] | None) -> int:
    """Re-exports into a scratch directory and compares bytes with the committed files."""
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if only:
            shutil.copy(HERE / "manifest.json", scratch / "manifest.json")
        fresh = export_all(scratch, only)
        differ = []
        for model in fresh["models"]:
            files = [model["pte"], *([model["ptd"]] if "ptd" in model else [])] + sorted(p.relative_to(scratch).as_posix()
                                            for p in (scratch / model["name"]).glob("*.npy"))
            for rel in files:
                committed = HERE / rel
                if not committed.exists() or sha256(committed) != sha256(scratch / rel):
                    differ.append(rel)
        if differ:
            print(f"check: {len(differ)} file(s) differ from the committed fixtures:")
            for rel in differ[:50]:
                print(f"  {rel}")
            return 1
        print("check: every re-exported file is byte-identical to the committed one")
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated model names to (re-)export")
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (default: tests/models)")
    parser.add_argument("--check", action="store_true", help="re-export and compare with the committed files")
    parser.add_argument("--list", action="store_true", help="list the model names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(s.name for s in all_specs()))
        return 0
    only = set(args.only.split(",")) if args.only else None
    torch.manual_seed(0)
    if args.check:
        return check(only)
    args.out.mkdir(parents=True, exist_ok=True)
    export_all(args.out, only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
