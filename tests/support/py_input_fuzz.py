"""Fuzzes the Python client's inputs (run as a child process by tests/test_py_fuzz.py):
random dtypes, ranks, transposes, strided and reversed slices, scalars, None, strings,
dicts, generators, a self-referential list, and objects that lie about themselves,
against real methods. Every case must run or raise TypeError/ValueError/etclient.Error;
anything else, or the process ending, fails the test.

    python py_input_fuzz.py SOCKET MODELS_DIR SEED CASES
"""

import array
import ctypes
import random
import sys

import numpy as np

import etclient

DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int16", "int32", "int64", "bool",
          "uint16", "uint32", "uint64", "complex64", "longdouble", "datetime64[s]", "object",
          "<f4", ">f4", ">i8", "V4", "U3"]


class LiesAboutDLPack:
    def __init__(self, result):
        self.result = result

    def __dlpack__(self, stream=None):
        if isinstance(self.result, Exception):
            raise self.result
        return self.result

    def __dlpack_device__(self):
        return (1, 0)


class ClaimsToBeTorch:
    pass


ClaimsToBeTorch.__name__ = ClaimsToBeTorch.__qualname__ = "Tensor"
ClaimsToBeTorch.__module__ = "torch"


class RaisesOnEverything:
    def __getattr__(self, name):
        raise RuntimeError(f"no {name} here")


def random_array(rng: random.Random):
    dtype = rng.choice(DTYPES)
    rank = rng.choice([0, 1, 2, 2, 3, 4, rng.randint(5, 18)])
    shape = tuple(rng.choice([0, 1, 1, 2, 3, 5]) for _ in range(rank))
    try:
        a = np.zeros(shape, dtype=dtype)
    except (TypeError, ValueError, MemoryError):
        a = np.zeros(shape, dtype=np.float32)
    if a.dtype.kind in "fc":
        a[...] = np.asarray(np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(a.shape)).astype(a.dtype) if a.size else a
    if rank >= 2 and rng.random() < 0.4:
        a = a.transpose(rng.sample(range(rank), rank))
    if rank >= 1 and rng.random() < 0.4:
        step = rng.choice([2, -1, -2, 3])
        a = a[::step]
    if rng.random() < 0.1:
        a = np.lib.stride_tricks.as_strided(a, strides=tuple(rng.choice([0, 4, 8, 12]) for _ in a.shape)) \
            if a.size and a.dtype.itemsize == 4 else a
    if rng.random() < 0.1:
        a.setflags(write=False)
    return a


def random_input(rng: random.Random, depth: int = 0):
    kind = rng.randrange(22)
    if kind < 7:
        a = random_array(rng)
        wrap = rng.randrange(5)
        try:
            if wrap == 1:
                return memoryview(a)
            if wrap == 2:
                return a.__dlpack__()
            if wrap == 3:
                return LiesAboutDLPack(a.__dlpack__())
        except (TypeError, ValueError, BufferError, RuntimeError):
            return a
        return a
    return [
        lambda: None, lambda: "text", lambda: b"\x00" * rng.randrange(64),
        lambda: bytearray(rng.randrange(64)), lambda: {"x": 1}, lambda: {1, 2},
        lambda: (i for i in range(3)), lambda: rng.choice([0, -1, 2**70, 3.5, float("nan"), True]),
        lambda: array.array(rng.choice("bBhHiIlLqQfd"), range(rng.randrange(8))),
        lambda: (ctypes.c_float * 6)(*range(6)), lambda: ClaimsToBeTorch(), lambda: RaisesOnEverything(),
        lambda: LiesAboutDLPack(rng.choice([None, 3, "capsule", ValueError("no"), RuntimeError("boom")])),
        lambda: [[1.0, 2.0], [3.0]], lambda: object(),
    ][kind - 7]()


def valid_input(rng: random.Random, method, i: int):
    """An input the method takes, in a random layout and through a random path."""
    meta = method.metadata
    if meta.input_kind(i) != "tensor":
        return {"int": 3, "float": 0.5, "bool": True}.get(meta.input_kind(i), 1)
    info = meta.input_tensor_meta(i)
    shape = info.sizes()
    if info.dtype_name() == "bfloat16":
        return bytes(info.nbytes())
    a = np.asarray(np.random.default_rng(rng.randint(0, 1 << 30)).standard_normal(shape) * 3).astype(info.dtype_name())
    rank = len(shape)
    if rank >= 2 and rng.random() < 0.5:
        order = rng.sample(range(rank), rank)
        a = np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))  # same values, other memory
    if rank >= 1 and rng.random() < 0.3:
        a = np.ascontiguousarray(a[::-1])[::-1]  # negative strides
    return rng.choice([lambda: a, lambda: memoryview(a) if a.flags.c_contiguous or a.flags.f_contiguous else a,
                       lambda: a.__dlpack__(), lambda: LiesAboutDLPack(a.__dlpack__())])()


def main() -> int:
    socket, models, seed, cases = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    runtime = etclient.Runtime(socket)
    methods = [runtime.load_program(f"{models}/{name}.pte").load_method(meth)
               for name, meth in [("add", "forward"), ("mlp", "forward"), ("scalars", "forward"),
                                  ("bfloat16", "forward"), ("where_bool", "forward"),
                                  ("dynamic_batch", "forward"), ("channels_last", "forward"),
                                  ("zoo_add", "int64"), ("add_unplanned_io", "forward")]]
    me = []
    me.append(me)  # a self-referential list
    ran = refused = 0
    for case in range(cases):
        method = rng.choice(methods)
        n = method.metadata.num_inputs()
        roll = rng.random()
        if roll < 0.35:
            inputs = [valid_input(rng, method, i) for i in range(n)]
            if n and rng.random() < 0.3:  # one bad apple
                inputs[rng.randrange(n)] = random_input(rng)
        elif roll < 0.4:
            inputs = me
        elif roll < 0.45:
            inputs = random_input(rng)  # a single object where a list is expected
        else:
            inputs = [random_input(rng) for _ in range(rng.choice([n, n, n, n - 1, n + 1]) if n else 0)]
        try:
            if rng.random() < 0.3:
                method.set_inputs(inputs)
                method.execute()
            else:
                method.execute(inputs)
            ran += 1
        except (TypeError, ValueError, etclient.Error):
            refused += 1
            try:
                method.outputs()
                print(f"case {case}: outputs() after a refused call did not raise", file=sys.stderr)
                return 1
            except ValueError:
                pass
    # Every method still works afterwards.
    x = np.load(f"{models}/add/forward.in0.npy")
    assert np.allclose(np.asarray(methods[0].execute([x, x])[0]), x + x)
    print(f"fuzzed {cases} cases: {ran} ran, {refused} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
