"""Reading and writing .npy files without numpy (for the command line)."""

from __future__ import annotations

import ast
import struct
from typing import Tuple

MAGIC = b"\x93NUMPY"
# descr -> (struct format code, item size, dtype name)
DESCRS = {
    "|b1": ("?", 1, "bool"), "|u1": ("B", 1, "uint8"), "|i1": ("b", 1, "int8"),
    "<i2": ("h", 2, "int16"), "<u2": ("H", 2, "uint16"), "<i4": ("i", 4, "int32"),
    "<i8": ("q", 8, "int64"), "<f2": ("e", 2, "float16"), "<f4": ("f", 4, "float32"),
    "<f8": ("d", 8, "float64"),
}
DESCR_OF = {name: descr for descr, (_, _, name) in DESCRS.items()}
DESCR_OF["bfloat16"] = "<u2"  # no .npy type: its bit patterns, as uint16


def read(path: str) -> Tuple[str, tuple, bytes]:
    """(descr, shape, C-order bytes) of a .npy file."""
    with open(path, "rb") as f:
        blob = f.read()
    if not blob.startswith(MAGIC):
        raise ValueError(f"{path}: not a .npy file")
    major = blob[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", blob[8:10]), 10
    else:
        (hlen,), start = struct.unpack("<I", blob[8:12]), 12
    header = ast.literal_eval(blob[start:start + hlen].decode("latin1"))
    descr = header["descr"].replace("=", "<")
    if descr not in DESCRS:
        raise ValueError(f"{path}: dtype {header['descr']} is not supported")
    if header.get("fortran_order"):
        raise ValueError(f"{path}: Fortran-ordered arrays are not supported; save a C-ordered one")
    shape = tuple(header["shape"])
    count = 1
    for s in shape:
        count *= s
    data = blob[start + hlen:start + hlen + count * DESCRS[descr][1]]
    if len(data) != count * DESCRS[descr][1]:
        raise ValueError(f"{path}: the data is shorter than its shape says")
    return descr, shape, data


def write(path: str, descr: str, shape: tuple, data: bytes) -> None:
    header = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)})
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(MAGIC + b"\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(data)
