"""The model fixtures are complete, consistent and what the issue asked for.

Every later test compares the daemon against these files, so a fixture that is
missing, stale (its bytes differ from what the manifest recorded) or degenerate
(inputs that could hide a layout mistake) would make those tests prove nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

MODELS = Path(__file__).resolve().parent / "models"
MANIFEST = json.loads((MODELS / "manifest.json").read_text())
ENTRIES = MANIFEST["models"]
BY_NAME = {m["name"]: m for m in ENTRIES}


def npy_dtype(name):
    """bfloat16 has no numpy dtype: it is stored as its uint16 bit pattern."""
    return np.dtype(np.uint16) if name == "bfloat16" else np.dtype(name)


def method_calls(method):
    """The first call and every subsequent call, each with inputs and expected."""
    return [method] + method.get("subsequent_calls", [])


def load(rel):
    return np.load(MODELS / rel, allow_pickle=False)


def non_zoo():
    return [m for m in ENTRIES if not m["zoo"]]


def test_exporter_versions_recorded():
    exporter = MANIFEST["exporter"]
    assert exporter["torch"] and exporter["executorch"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda m: m["name"])
def test_program_file_matches_manifest(entry):
    path = MODELS / entry["pte"]
    data = path.read_bytes()
    assert len(data) == entry["bytes"]
    assert hashlib.sha256(data).hexdigest() == entry["sha256"], "re-run export.py: stale fixture"
    expected_id = b"BP08" if entry["bundled"] else b"ET12"
    assert data[4:8] == expected_id
    assert path.suffix == (".bpte" if entry["bundled"] else ".pte")
    if "ptd" in entry:  # the external data file written beside it
        ptd = (MODELS / entry["ptd"]).read_bytes()
        assert hashlib.sha256(ptd).hexdigest() == entry["ptd_sha256"], "re-run export.py"
        assert ptd[4:8] == b"FT01" and ptd[8:12] == b"FH01"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda m: m["name"])
def test_inputs_and_expected_outputs_are_consistent(entry):
    assert entry["methods"], "a program without methods"
    for method in entry["methods"]:
        n_in = len(method["inputs"])
        assert len(method["input_kinds"]) == n_in == len(method["input_dtypes"])
        assert len(method["program_input_dtypes"]) == n_in
        assert len(method["expected_dtypes"]) == len(method["expected"])
        assert len(method["program_output_dtypes"]) == len(method["expected"])
        assert method["atol"] >= 0 and method["rtol"] >= 0
        for call in method_calls(method):
            for rel, kind, dtype in zip(call["inputs"], method["input_kinds"], method["input_dtypes"]):
                array = load(rel)
                assert array.dtype == npy_dtype(dtype), rel
                if kind != "tensor":
                    assert array.ndim == 0, f"{rel}: a {kind} input is a 0-d array"
            for rel, dtype in zip(call["expected"], method["expected_dtypes"]):
                assert load(rel).dtype == npy_dtype(dtype), rel
        # What the program declares agrees with what eager produced.
        for declared, kind, recorded in zip(method["program_input_dtypes"], method["input_kinds"],
                                            method["input_dtypes"]):
            if kind == "tensor":
                assert declared == recorded
        assert method["program_output_dtypes"] == method["expected_dtypes"]


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda m: m["name"])
def test_float_inputs_have_all_distinct_values(entry):
    """No `ones`: a wrong layout must not be able to pass by luck.

    Where the dtype has room: float16/bfloat16 tensors of up to 256 elements and
    float32/float64 tensors of up to 65536 are all distinct; a larger float32 tensor
    (an image) may repeat a value by chance, but 99.9% are distinct.
    """
    for method in entry["methods"]:
        for call in method_calls(method):
            for rel, dtype in zip(call["inputs"], method["input_dtypes"]):
                array = load(rel)
                if not dtype.startswith("float") and dtype != "bfloat16" or array.size < 2:
                    continue
                values = array.view(np.float16) if dtype == "float16" else array
                values = values[np.isfinite(values)] if dtype != "bfloat16" else values
                distinct = np.unique(values).size / values.size
                if dtype in ("float16", "bfloat16"):
                    if array.size <= 256:
                        assert distinct == 1.0, f"{rel} repeats values"
                elif array.size <= 65536:
                    assert distinct == 1.0, f"{rel} repeats values"
                else:
                    assert distinct > 0.999, f"{rel}: only {distinct:.2%} distinct"


def test_required_models_present():
    required = ["add", "mlp", "cnn", "mobilenet_v2", "transformer_block", "channels_last",
                "size_one", "identity_output", "inplace_input", "mutable_buffer", "dynamic_batch",
                "two_methods", "scalars", "tuple_output", "dict_output", "mlp_xnnpack", "cnn_xnnpack",
                "mobilenet_v2_xnnpack", "transformer_block_xnnpack"]
    missing = [name for name in required if name not in BY_NAME]
    assert not missing, f"missing fixtures: {missing}"


def test_two_input_add_and_batched_mlp():
    assert len(BY_NAME["add"]["methods"][0]["inputs"]) == 2
    assert load(BY_NAME["mlp"]["methods"][0]["inputs"][0]).shape[0] > 1


def test_dtype_models_cover_int64_bool_half_bfloat16_double():
    dtypes = {d for m in non_zoo() for meth in m["methods"] for d in meth["input_dtypes"]}
    assert {"int64", "bool", "float16", "bfloat16", "float64"} <= dtypes


def test_channels_last_method_expects_channels_last():
    orders = BY_NAME["channels_last"]["methods"][0]["input_dim_orders"]
    assert orders[0] == [0, 2, 3, 1]


def test_size_one_dimension_in_an_input():
    assert 1 in load(BY_NAME["size_one"]["methods"][0]["inputs"][0]).shape[1:]


def test_output_that_is_an_input():
    method = BY_NAME["identity_output"]["methods"][0]
    np.testing.assert_array_equal(load(method["expected"][0]), load(method["inputs"][0]))


def test_method_writing_its_input():
    for name in ["inplace_input", "inplace_input_unplanned_io"]:
        method = BY_NAME[name]["methods"][0]
        after = load(method["mutated_inputs"]["0"])
        assert not np.array_equal(after, load(method["inputs"][0]))
        np.testing.assert_array_equal(load(method["expected"][0]), after)


def test_mutable_buffer_state_changes_across_calls():
    method = BY_NAME["mutable_buffer"]["methods"][0]
    calls = method_calls(method)
    assert len(calls) >= 3
    outputs = [load(c["expected"][0]) for c in calls]
    inputs = [load(c["inputs"][0]) for c in calls]
    # The state accumulates: each output is the running sum of the inputs so far.
    np.testing.assert_allclose(outputs[-1], np.sum(inputs, axis=0), rtol=1e-6)


def test_dynamic_batch_has_calls_at_several_sizes():
    method = BY_NAME["dynamic_batch"]["methods"][0]
    batches = {load(c["inputs"][0]).shape[0] for c in method_calls(method)}
    assert len(batches) >= 3 and 1 in batches


def test_two_methods_and_scalar_inputs():
    assert len(BY_NAME["two_methods"]["methods"]) == 2
    kinds = BY_NAME["scalars"]["methods"][0]["input_kinds"]
    assert "int" in kinds and "float" in kinds


def test_tuple_and_dict_outputs():
    assert len(BY_NAME["tuple_output"]["methods"][0]["expected"]) == 2
    assert len(BY_NAME["dict_output"]["methods"][0]["expected"]) >= 3


def test_unplanned_io_variants():
    unplanned = [m["name"] for m in ENTRIES if not m["planned_io"]]
    assert len(unplanned) >= 2, unplanned


@pytest.mark.parametrize("name", ["mlp", "cnn", "mobilenet_v2", "transformer_block"])
def test_delegated_variants_use_xnnpack(name):
    entry = BY_NAME[f"{name}_xnnpack"]
    assert entry["delegated"]
    assert all("XnnpackBackend" in m["delegates"] for m in entry["methods"])
    assert not any(m["delegates"] for m in BY_NAME[name]["methods"]), "the portable twin delegates"


def test_bundled_program_present():
    bundled = [m for m in ENTRIES if m["bundled"]]
    assert bundled and all(m["pte"].endswith(".bpte") for m in bundled)


# The operator names FORMAT.md section 6 lists for real exported models; the op zoo
# must contain each of them (as found in the exported programs, not as intended).
# torch 2.15 exports squeeze(x, dim) as squeeze_copy.dims_out (FORMAT.md: dim_out).
FORMAT_SECTION_6_OPS = """
aten::convolution.out aten::_native_batch_norm_legit_no_training.out aten::hardtanh.out
aten::add.out aten::mean.out aten::permute_copy.out aten::addmm.out aten::view_copy.out
aten::clamp.out aten::div.out aten::mul.out aten::relu.out
aten::max_pool2d_with_indices.out aten::cat.out aten::_softmax.out aten::bmm.out aten::gelu.out
aten::native_layer_norm.out aten::expand_copy.out aten::select_copy.int_out
aten::squeeze_copy.dims_out aten::unsqueeze_copy.out aten::index.Tensor_out
aten::mul.Scalar_out aten::sub.out aten::constant_pad_nd.out aten::mm.out
aten::avg_pool2d.out aten::_adaptive_avg_pool2d.out aten::sigmoid.out aten::tanh.out
aten::_log_softmax.out aten::leaky_relu.out aten::upsample_nearest2d.vec_out
aten::upsample_bilinear2d.vec_out aten::slice_copy.Tensor_out aten::split_with_sizes_copy.out
aten::sum.IntList_out aten::rsqrt.out aten::pow.Tensor_Scalar_out aten::full.out
aten::where.self_out aten::embedding.out aten::copy_ aten::sym_size.int
dim_order_ops::_to_dim_order_copy.out dim_order_ops::_clone_dim_order.out
""".split()


def zoo_operators():
    return {op for m in ENTRIES if m["zoo"] for op in m["operators"]}


def test_zoo_covers_format_section_6():
    missing = sorted(set(FORMAT_SECTION_6_OPS) - zoo_operators())
    assert not missing, f"ops no zoo program contains: {missing}"


def test_zoo_is_broad():
    zoo = [m for m in ENTRIES if m["zoo"]]
    assert len(zoo) >= 150
    assert len(zoo_operators()) >= 100


def test_every_zoo_method_names_its_ops():
    for entry in ENTRIES:
        if entry["zoo"]:
            for method in entry["methods"]:
                assert method["operators"], f"{entry['name']}.{method['name']} has no operators"


def test_fixture_directory_under_60_mb():
    total = sum(p.stat().st_size for p in MODELS.rglob("*") if p.is_file())
    assert total < 60 * 1024 * 1024, f"{total / 2**20:.1f} MiB"


def test_no_stray_fixture_files():
    listed = {MODELS / m["pte"] for m in ENTRIES} | {MODELS / m["ptd"] for m in ENTRIES if "ptd" in m}
    for entry in ENTRIES:
        for method in entry["methods"]:
            for call in method_calls(method):
                listed |= {MODELS / rel for rel in call["inputs"] + call["expected"]}
                listed |= {MODELS / rel for rel in call.get("mutated_inputs", {}).values()}
    on_disk = (set(MODELS.glob("*.pte")) | set(MODELS.glob("*.bpte")) | set(MODELS.glob("*.ptd"))
               | set(MODELS.glob("*/*.npy")))
    stray = sorted(str(p.relative_to(MODELS)) for p in on_disk - listed)
    assert not stray, f"files the manifest does not list: {stray[:10]}"
