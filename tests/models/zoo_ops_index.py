"""Zoo family: advanced indexing writes and reads (index_put with None, tensor and
mask indices, accumulate; index_copy; index with a mask), the patterns decoder LLMs'
KV caches and masked updates produce."""

from __future__ import annotations

import torch

from zoo_ops import Fn, ZooOp, values


def _put(fn):
    """A module computing fn(y, *rest) on a clone y of the first input."""

    def forward(m, x, *rest):
        y = x.clone()
        fn(y, *rest)
        return y

    return lambda: Fn(forward)


def _set_cache(y, k, pos):
    y[:, :, pos] = k


def _set_separated(y, v, i, j):
    y[i, :, j] = v


def _set_masked(y, mask, v):
    y[mask] = v


def _set_masked_scalar(y, mask):
    y[mask] = -2.5


def _set_rows(y, v, idx):
    y[:, idx] = v


def family_ops() -> list[ZooOp]:
    f = lambda shape, seed, dt="float32": values(shape, dt, seed)  # noqa: E731
    pos = torch.tensor([3, 0, 5])
    return [
        ZooOp("index_put_cache", _put(_set_cache),
              {dt: (f((1, 2, 6, 4), 1, dt), f((1, 2, 3, 4), 2, dt), pos)
               for dt in ["float32", "float16", "bfloat16", "int64"]}
              | {"negative_positions": (f((1, 2, 6, 4), 3), f((1, 2, 2, 4), 4), torch.tensor([-1, -6]))},
              ["index_put", "kv_cache"]),
        ZooOp("index_put_rows", _put(_set_rows),
              {"float32": (f((3, 5, 2), 1), f((3, 2, 2), 2), torch.tensor([4, 1])),
               "broadcast_values": (f((3, 5, 2), 3), f((2,), 4), torch.tensor([0, 2])),
               "int32_indices": (f((3, 5, 2), 5), f((3, 2, 2), 6), torch.tensor([2, 3], dtype=torch.int32))},
              ["index_put"]),
        ZooOp("index_put_separated", _put(_set_separated),
              {"float32": (f((4, 3, 5), 1), f((2, 3), 2), torch.tensor([3, 0]), torch.tensor([1, 4])),
               "broadcast_indices": (f((4, 3, 5), 3), f((2, 3, 3), 4), torch.tensor([[3], [1]]),
                                     torch.tensor([0, 2, 4]))},
              ["index_put"]),
        ZooOp("index_put_mask", _put(_set_masked),
              {"float32": (f((3, 4), 1), f((3, 4), 2) > 0, torch.tensor(7.5)),
               "int64": (f((3, 4), 3, "int64"), f((3, 4), 4) > 0, torch.tensor(9))},
              ["index_put", "bool_mask"]),
        ZooOp("index_put_mask_scalar", _put(_set_masked_scalar),
              {"float32": (f((2, 3, 4), 1), f((2, 3), 2) > 0)},
              ["index_put", "bool_mask"]),
        ZooOp("index_put_accumulate",
              lambda: Fn(lambda m, x, v, i: torch.ops.aten.index_put(x, [None, i], v, True)),
              {"float32": (f((2, 5), 1), f((2, 4), 2), torch.tensor([1, 3, 1, 1])),
               "int64": (f((2, 5), 3, "int64"), f((2, 4), 4, "int64"), torch.tensor([0, 4, 4, 2]))},
              ["index_put", "accumulate"]),
        ZooOp("index_copy",
              lambda: Fn(lambda m, x, i, s: x.index_copy(1, i, s)),
              {"float32": (f((2, 6, 3), 1), torch.tensor([5, 0, 2]), f((2, 3, 3), 2)),
               "int64": (f((2, 6, 3), 3, "int64"), torch.tensor([1, 4]), f((2, 2, 3), 4, "int64"))},
              ["index_copy", "index_put"]),
        ZooOp("index_none_tensor",
              lambda: Fn(lambda m, x, i: x[:, :, i] * 2),
              {"float32": (f((2, 3, 6), 1), torch.tensor([[5, 0], [2, 2]])),
               "int64": (f((2, 3, 6), 2, "int64"), torch.tensor([4, -1]))},
              ["index"]),
    ]
