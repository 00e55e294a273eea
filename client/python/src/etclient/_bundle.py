"""Test cases of a bundled program (.bpte) read in the client, for portable_lib's
load_bundled_input() and verify_result_with_bundled_expected_output(): a small
read-only flatbuffer reader for the schema in runtime/schema/bundled_program.fbs
(the daemon parses and verifies the whole bundle itself when it loads it). Every read
is bounds-checked: a malformed bundle raises InvalidArgument."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

from etclient import _native
from etclient._meta import SCALAR_TYPES

# The program format's ScalarType codes: (struct format, item size); bfloat16 has none.
_FORMATS = {0: "B", 1: "b", 2: "h", 3: "i", 4: "q", 5: "e", 6: "f", 7: "d", 11: "?", 15: None}
_ITEM = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 15: 2}
_TENSOR, _INT, _BOOL, _DOUBLE = 1, 2, 3, 4
_NAMES = {code: name for name, (code, _) in SCALAR_TYPES.items()}


class _Bad(Exception):
    pass


class _Reader:
    def __init__(self, data: bytes):
        self.data = data

    def _unpack(self, fmt: str, pos: int) -> Any:
        if pos < 0 or pos + struct.calcsize(fmt) > len(self.data):
            raise _Bad(f"a read at byte {pos} past the end ({len(self.data)} bytes)")
        return struct.unpack_from("<" + fmt, self.data, pos)[0]

    def table(self, pos: int) -> "_Table":
        vtable = pos - self._unpack("i", pos)
        size = self._unpack("H", vtable)
        if size < 4 or size % 2:
            raise _Bad(f"a vtable at byte {vtable} of size {size}")
        return _Table(self, pos, vtable, size)

    def deref(self, pos: int) -> int:
        return pos + self._unpack("I", pos)

    def vector(self, pos: int) -> tuple:
        """(first element's position, length) of the vector whose offset is at `pos`."""
        start = self.deref(pos)
        return start + 4, self._unpack("I", start)


class _Table:
    def __init__(self, reader: _Reader, pos: int, vtable: int, size: int):
        self.r, self.pos, self.vtable, self.size = reader, pos, vtable, size

    def field(self, index: int) -> int:
        """The position of field `index`, or 0 when absent."""
        entry = 4 + 2 * index
        if entry >= self.size:
            return 0
        offset = self.r._unpack("H", self.vtable + entry)
        return self.pos + offset if offset else 0

    def scalar(self, index: int, fmt: str, default: Any = 0) -> Any:
        at = self.field(index)
        return self.r._unpack(fmt, at) if at else default

    def tables(self, index: int) -> List["_Table"]:
        at = self.field(index)
        if not at:
            return []
        start, length = self.r.vector(at)
        if start + 4 * length > len(self.r.data):
            raise _Bad(f"a vector of {length} tables past the end")
        return [self.r.table(self.r.deref(start + 4 * i)) for i in range(length)]

    def raw(self, index: int, item: int = 1) -> bytes:
        at = self.field(index)
        if not at:
            return b""
        start, length = self.r.vector(at)
        end = start + length * item
        if end > len(self.r.data):
            raise _Bad(f"a vector of {length} items of {item} bytes past the end")
        return self.r.data[start:end]

    def string(self, index: int) -> str:
        return self.raw(index).decode("utf-8", "replace")


@dataclass
class BundledTensor:
    scalar_type: int
    sizes: tuple
    dim_order: tuple
    data: bytes

    def values(self) -> List[Any]:
        """The elements in logical (row-major) order, as Python numbers."""
        fmt = _FORMATS[self.scalar_type]
        if fmt is None:  # bfloat16: the high half of a float32
            stored = [struct.unpack("<f", b"\0\0" + self.data[i:i + 2])[0]
                      for i in range(0, len(self.data), 2)]
        else:
            stored = list(struct.unpack(f"<{len(self.data) // _ITEM[self.scalar_type]}{fmt}",
                                        self.data))
        return _logical(stored, self.sizes, self.dim_order)

    def as_input(self, empty: Callable[[tuple, str], Any]) -> Any:
        """The tensor as an input: a fresh etclient.Tensor from `empty(shape, dtype)`
        (Runtime.empty) holding the elements row-major, for every dtype and size."""
        item = _ITEM[self.scalar_type]
        chunks = [self.data[i:i + item] for i in range(0, len(self.data), item)]
        out = empty(self.sizes, _NAMES[self.scalar_type])
        if self.data:
            memoryview(out).cast("B")[:] = b"".join(_logical(chunks, self.sizes, self.dim_order))
        return out


@dataclass
class TestCase:
    inputs: List[Any]
    expected: List[Any]


def _logical(stored: List[Any], sizes: tuple, dim_order: tuple) -> List[Any]:
    """Elements stored in `dim_order` (outermost first) reordered row-major."""
    rank = len(sizes)
    if not dim_order or tuple(dim_order) == tuple(range(rank)):
        return stored
    # The stride of each logical dim in the stored layout.
    strides = [0] * rank
    step = 1
    for d in reversed(dim_order):
        strides[d] = step
        step *= sizes[d]
    out = []
    index = [0] * rank
    for _ in range(math.prod(sizes)):
        out.append(stored[sum(i * s for i, s in zip(index, strides))])
        for d in reversed(range(rank)):
            index[d] += 1
            if index[d] < sizes[d]:
                break
            index[d] = 0
    return out


def _value(table: _Table) -> Any:
    kind = table.scalar(0, "B")
    at = table.field(1)
    if not at:
        raise _Bad("a test value without a body")
    body = table.r.table(table.r.deref(at))
    if kind == _TENSOR:
        scalar_type = body.scalar(0, "b")
        if scalar_type not in _FORMATS:
            raise _Bad(f"a tensor of ScalarType {scalar_type}, which et-serverd lacks")
        sizes = tuple(struct.unpack(f"<{len(body.raw(1, 4)) // 4}i", body.raw(1, 4)))
        dim_order = tuple(body.raw(3))
        if dim_order and sorted(dim_order) != list(range(len(sizes))):
            raise _Bad(f"a tensor of rank {len(sizes)} with dim order {list(dim_order)}")
        data = body.raw(2)
        if any(s < 0 for s in sizes) or len(data) != math.prod(sizes) * _ITEM[scalar_type]:
            raise _Bad(f"a tensor of sizes {list(sizes)} with {len(data)} bytes of data")
        return BundledTensor(scalar_type, sizes, dim_order, data)
    if kind == _INT:
        return body.scalar(0, "q")
    if kind == _BOOL:
        return bool(body.scalar(0, "B"))
    if kind == _DOUBLE:
        return body.scalar(0, "d", 0.0)
    raise _Bad(f"a test value of kind {kind}")


def _root(data: bytes) -> _Table:
    if len(data) < 8 or data[4:8] != b"BP08":
        raise _Bad("not a bundled program (no 'BP08' identifier at byte 4)")
    reader = _Reader(data)
    return reader.table(reader.deref(0))


def check_bundle(data: bytes) -> None:
    """InvalidArgument unless `data` reads as a bundled program."""
    try:
        for suite in _root(data).tables(1):
            suite.string(0)
            suite.tables(1)
    except (_Bad, struct.error, UnicodeError) as e:
        raise _native.InvalidArgument(f"the bundled program is malformed: {e}") from None


def test_case(data: bytes, method: str, index: int,
              empty: Optional[Callable[[tuple, str], Any]] = None) -> TestCase:
    """Case `index` of `method`'s suite, its tensor inputs made with `empty` (Runtime.empty;
    None: left as BundledTensors).
    NotFound for a method without a suite (naming those that have one); InvalidArgument
    for an index out of range or a malformed bundle."""
    try:
        suites = {s.string(0): s for s in _root(data).tables(1)}
        if method not in suites:
            raise _native.NotFound(f"the bundled program has no test cases for method "
                                   f"'{method}' (it has: {', '.join(sorted(suites))})")
        cases = suites[method].tables(1)
        if not 0 <= index < len(cases):
            raise _native.InvalidArgument(f"test case {index} of method '{method}' does not "
                                          f"exist: it has {len(cases)}")
        case = cases[index]
        inputs = [_value(v) for v in case.tables(0)]
        expected = [_value(v) for v in case.tables(1)]
    except (_Bad, struct.error, UnicodeError) as e:
        raise _native.InvalidArgument(f"the bundled program is malformed: {e}") from None
    if empty is not None:
        inputs = [v.as_input(empty) if isinstance(v, BundledTensor) else v for v in inputs]
    return TestCase(inputs, expected)


def _close(got: float, want: float, rtol: float, atol: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return abs(got - want) <= atol + rtol * abs(want)


def compare(outputs: List[Any], expected: List[Any], rtol: float, atol: float,
            method: str, index: int) -> None:
    """InvalidArgument naming the first output (and element) that is not close enough."""
    where = f"method '{method}' test case {index}"
    if len(outputs) != len(expected):
        raise _native.InvalidArgument(f"{where}: {len(outputs)} outputs, {len(expected)} expected")
    for i, (got, want) in enumerate(zip(outputs, expected)):
        if not isinstance(want, BundledTensor):
            if not _close(float(got), float(want), rtol, atol):
                raise _native.InvalidArgument(f"{where}: output {i} is {got}, expected {want}")
            continue
        code = SCALAR_TYPES.get(getattr(got, "dtype_name", ""), (None,))[0]
        if code != want.scalar_type:
            raise _native.InvalidArgument(f"{where}: output {i} is {got!r}, expected a tensor of "
                                          f"ScalarType {want.scalar_type}")
        if tuple(got.shape) != tuple(want.sizes):
            raise _native.InvalidArgument(f"{where}: output {i} has shape {list(got.shape)}, "
                                          f"expected {list(want.sizes)}")
        got_values = BundledTensor(want.scalar_type, tuple(got.shape), (), got.to_bytes()).values()
        for k, (g, w) in enumerate(zip(got_values, want.values())):
            if not _close(float(g), float(w), rtol, atol):
                raise _native.InvalidArgument(
                    f"{where}: output {i} element {k} (row-major) is {g}, expected {w} "
                    f"(rtol {rtol}, atol {atol})")
