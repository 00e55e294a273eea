"""Zoo family: forms that real user models reach and the op zoo did not cover, found by
exporting torchvision / torch.nn models with ExecuTorch 1.5.1 and running them.

u_conv3d*: aten::convolution.out with rank-5 input and weight (video models such as
torchvision.models.video.r3d_18): plain, strided/padded/dilated with groups and no
bias, and transposed with output_padding. ExecuTorch's own portable kernel refuses
rank 5, so the manifest's "executorch_runtime" records a failure for these.

u_embedding_bag: nn.EmbeddingBag as recommendation models use it (aten::_embedding_bag.out,
which ExecuTorch 1.5.1's portable library lacks): sum, mean and max bags, an empty bag,
per-sample weights, include_last_offset and padding_idx. The configuration is an int
input (see zoo_ops_math.py), so each is its own method.
"""

from __future__ import annotations

import torch
from torch import nn

from zoo_ops import ZooOp, module_op, seeded_module, values

# (mode, include_last_offset, padding_idx, per-sample weights) by configuration number
BAG_CONFIGS = [("sum", False, None, False), ("mean", False, None, False), ("max", False, None, False),
               ("sum", False, None, True), ("mean", True, None, False), ("mean", False, 3, False),
               ("max", False, 3, False)]


class Bags(nn.Module):
    """One nn.EmbeddingBag per configuration (weights are parameters, as in a trained
    model: export then emits aten::_embedding_bag)."""

    def __init__(self, dtype=torch.float32):
        super().__init__()
        torch.manual_seed(350)
        self.bags = nn.ModuleList(
            nn.EmbeddingBag(12, 6, mode=mode, include_last_offset=last, padding_idx=pad).to(dtype)
            for mode, last, pad, _ in BAG_CONFIGS)

    def forward(self, idx, offsets, psw, config):
        weighted = BAG_CONFIGS[config][3]
        return self.bags[config](idx, offsets, per_sample_weights=psw if weighted else None)


def embedding_bag_op() -> ZooOp:
    idx = torch.tensor([1, 5, 7, 2, 9, 3, 3, 0, 11])
    bags = torch.tensor([0, 3, 3, 5])  # bag 1 is empty
    variants = {}
    for config, (mode, last, pad, weighted) in enumerate(BAG_CONFIGS):
        name = mode + ("_per_sample_weights" if weighted else "") + ("_last_offset" if last else "") + (
            "_padding_idx" if pad is not None else "")
        offsets = torch.cat([bags, torch.tensor([len(idx)])]) if last else bags
        variants[name] = (idx, offsets, values((len(idx),), "float32", 330), config)
    return ZooOp("u_embedding_bag", Bags, variants, ["embedding_bag"], loose=10)


def family_ops() -> list[ZooOp]:
    vol = values((2, 4, 5, 6, 7), "float32", 301)
    return [
        embedding_bag_op(),
        module_op("u_conv3d", seeded_module(lambda: nn.Conv3d(4, 6, 3, padding=1), 311),
                  {"float32": (vol,), "float64": (vol.double(),)}, ["convolution"], loose=10),
        module_op("u_conv3d_stride_pad_dilation_groups",
                  seeded_module(lambda: nn.Conv3d(4, 6, (2, 3, 1), stride=(1, 2, 2), padding=(1, 0, 2),
                                                  dilation=(2, 1, 1), groups=2, bias=False), 312),
                  {"float32": (vol,)}, ["convolution"], loose=10),
        module_op("u_conv_transpose3d",
                  seeded_module(lambda: nn.ConvTranspose3d(4, 3, (3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1),
                                                           output_padding=(1, 0, 1)), 313),
                  {"float32": (values((2, 4, 3, 4, 5), "float32", 302),)}, ["convolution"], loose=10),
    ]
