"""Zoo family: forms that real user models reach and the op zoo did not cover, found by
exporting torchvision / torch.nn models with ExecuTorch 1.5.1 and running them.

u_conv3d*: aten::convolution.out with rank-5 input and weight (video models such as
torchvision.models.video.r3d_18): plain, strided/padded/dilated with groups and no
bias, and transposed with output_padding. ExecuTorch's own portable kernel refuses
rank 5, so the manifest's "executorch_runtime" records a failure for these.
"""

from __future__ import annotations

from torch import nn

from zoo_ops import ZooOp, module_op, seeded_module, values


def family_ops() -> list[ZooOp]:
    vol = values((2, 4, 5, 6, 7), "float32", 301)
    return [
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
