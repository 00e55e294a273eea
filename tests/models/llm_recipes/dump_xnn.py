import sys, json, subprocess, tempfile, os, struct, collections
from executorch.exir._serialize._program import deserialize_pte_binary
import executorch.backends.xnnpack.serialization.xnnpack_graph_schema as xs
SCHEMA = os.path.join(os.path.dirname(xs.__file__), "schema.fbs")
pte = deserialize_pte_binary(open(sys.argv[1], "rb").read()); prog = pte.program
plan = prog.execution_plan[0]
tot = collections.Counter()
for d in plan.delegates:
    blob = bytes(prog.backend_delegate_data[d.processed.index].data)
    fo, fs, co, cs = struct.unpack("<IIIQ", blob[10:30])
    with tempfile.TemporaryDirectory() as td:
        p = os.path.join(td, "g.bin"); open(p, "wb").write(blob[fo:fo+fs])
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", td, SCHEMA, "--", p], check=True)
        g = json.load(open(os.path.join(td, "g.json")))
    for n in g["xnodes"]: tot[n["xnode_union_type"]] += 1
    if d.processed.index == int(sys.argv[2]):
        print("constant_data bytes:", cs)
        for i, v in enumerate(g["xvalues"]):
            val = v["xvalue_union"]; tv = val.get("tensor_value", val)
            qp = val.get("quant_params", {}); qp = {k: (f"[{len(x)} floats]" if isinstance(x, list) else x) for k, x in qp.items()}
            print(i, v["xvalue_union_type"], tv.get("datatype"), "dims", tv.get("dims"), "id_out", tv.get("id_out"), "const_buf", tv.get("constant_buffer_idx"), val.get("quant_params_type", ""), qp)
        for n in g["xnodes"]: print(n["xnode_union_type"], n["xnode_union"])
print("TOTAL xnodes across delegates:", dict(tot))
