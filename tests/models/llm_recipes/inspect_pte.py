# Usage: python inspect_pte.py file.pte  -- lists operators, delegates, and XNNPACK node types.
import sys, json, subprocess, tempfile, os, collections, struct
from executorch.exir._serialize._program import deserialize_pte_binary
import executorch.backends.xnnpack.serialization.xnnpack_graph_schema as xs
data = open(sys.argv[1], "rb").read()
pte = deserialize_pte_binary(data)
prog = pte.program
SCHEMA = os.path.join(os.path.dirname(xs.__file__), "schema.fbs")
for plan in prog.execution_plan:
    print(f"== plan {plan.name}: {len(plan.operators)} operators, {len(plan.delegates)} delegates, {len(plan.chains[0].instructions)} instructions")
    cnt = collections.Counter()
    for ins in plan.chains[0].instructions:
        a = ins.instr_args
        if type(a).__name__ == "KernelCall":
            op = plan.operators[a.op_index]; cnt[f"{op.name}.{op.overload}"] += 1
        else:
            cnt["<" + type(a).__name__ + ">"] += 1
    for k, v in sorted(cnt.items()): print(f"   {v:3d} x {k}")
    for d in plan.delegates:
        print(f"   delegate id={d.id} processed.location={d.processed.location} index={d.processed.index}")
        if d.id != "XnnpackBackend": continue
        blob = prog.backend_delegate_data[d.processed.index].data if d.processed.location.name == "INLINE" else pte.delegate_segments[d.processed.index] if hasattr(pte,'delegate_segments') else None
        if blob is None:
            blob = prog.segments  # fallthrough
        blob = bytes(blob)
        assert blob[4:8] == b"XH00", blob[:8]
        fo, fs = struct.unpack("<II", blob[10:18])
        fb = blob[fo:fo+fs]
        with tempfile.TemporaryDirectory() as td:
            p = os.path.join(td, "g.bin"); open(p, "wb").write(fb)
            subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", td, SCHEMA, "--", p], check=True)
            g = json.load(open(os.path.join(td, "g.json")))
        nodes = collections.Counter(n["xnode_union_type"] for n in g["xnodes"])
        print("      xnodes:", dict(nodes))
        vals = collections.Counter()
        for v in g["xvalues"]:
            t = v["xvalue_union_type"]; val = v["xvalue_union"]
            if t == "XNNQuantizedTensorValue":
                qt = val["quant_params_type"]; qp = val["quant_params"]
                dt = val["tensor_value"].get("datatype")
                extra = {k: qp[k] for k in ("channel_dim", "group_size", "num_nonbatch_dims") if k in qp}
                vals[f"{qt} dtype={dt} {extra}"] += 1
            else:
                vals[f"{t} dtype={val.get('datatype')}"] += 1
        for k, c in sorted(vals.items()): print(f"      {c:3d} values: {k}")
