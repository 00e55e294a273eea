"""Zoo family: Fourier transforms and complex values (aten::_fft_r2c, _fft_c2r,
_conj_physical, view_as_real_copy), as audio front ends use them: torch.fft.rfft,
rfftn, fft of a real signal, irfft, and a power spectrogram from torch.stft.

Complex tensors live only inside the programs: every method takes and returns real
tensors (view_as_real at the end), as deployed models do. The argument choices (which
transform, n, norm) are int inputs, one method per combination.
"""

from __future__ import annotations

import torch

from zoo_ops import Fn, ZooOp, values

NORMS = ["backward", "ortho", "forward"]


def forward_transform(x, kind, norm):
    norm = NORMS[norm]
    if kind == 0:
        return torch.fft.rfft(x, norm=norm)
    if kind == 1:
        return torch.fft.rfftn(x, dim=(-2, -1), norm=norm)
    return torch.fft.fft(x, norm=norm)  # a real signal's full (two-sided) spectrum


def r2c_op() -> ZooOp:
    variants = {}
    for kind, kind_name in enumerate(["rfft", "rfftn", "fft_real"]):
        for norm, norm_name in enumerate(NORMS):
            variants[f"{kind_name}_{norm_name}"] = (values((2, 3, 8), "float32", 200 + kind), kind, norm)
    variants["rfft_odd_length"] = (values((2, 7), "float32", 210), 0, 0)
    variants["rfft_length_12"] = (values((3, 12), "float32", 211), 0, 1)
    variants["rfftn_float64"] = (values((2, 5, 6), "float64", 212), 1, 1)
    variants["rfft_long"] = (values((2, 256), "float32", 213), 0, 0)
    return ZooOp("m_fft_r2c", lambda: Fn(lambda m, x, kind, norm: torch.view_as_real(
        forward_transform(x, kind, norm))), variants, ["_fft_r2c", "view_as_real_copy"], loose=10)


def c2r_op() -> ZooOp:
    variants = {}
    for norm, norm_name in enumerate(NORMS):
        variants[f"irfft_{norm_name}"] = (values((2, 3, 8), "float32", 220 + norm), 0, norm, 8)
    variants["irfft_odd"] = (values((2, 7), "float32", 225), 0, 0, 7)
    variants["irfft_cropped"] = (values((2, 10), "float32", 227), 0, 0, 6)  # fewer
    variants["irfftn"] = (values((2, 4, 6), "float32", 228), 1, 1, 6)
    variants["irfftn_float64"] = (values((2, 4, 6), "float64", 229), 1, 2, 6)

    def fn(m, x, kind, norm, n):
        spectrum = torch.fft.rfft(x) if kind == 0 else torch.fft.rfftn(x, dim=(-2, -1))
        if kind == 0:
            return torch.fft.irfft(spectrum, n=n, norm=NORMS[norm])
        return torch.fft.irfftn(spectrum, s=(x.shape[-2], n), dim=(-2, -1), norm=NORMS[norm])

    return ZooOp("m_fft_c2r", lambda: Fn(fn), variants, ["_fft_c2r", "_fft_r2c"], loose=10)


def conj_op() -> ZooOp:
    variants = {"float32": (values((2, 3, 8), "float32", 230),),
                "float64": (values((3, 6), "float64", 231),)}
    return ZooOp("m_conj_physical",
                 lambda: Fn(lambda m, x: torch.view_as_real(
                     torch.ops.aten._conj_physical(torch.fft.rfft(x)))),
                 variants, ["_conj_physical", "view_as_real_copy"], loose=10,
                 preserve=[torch.ops.aten._conj_physical.default])


def spectrogram_op() -> ZooOp:
    """A power spectrogram the way audio models compute one (torch.stft with a Hann
    window, then |X|^2 through view_as_real)."""
    def fn(m, x):
        spec = torch.stft(x, n_fft=16, hop_length=4, window=torch.hann_window(16),
                          return_complex=True)
        return torch.view_as_real(spec).pow(2).sum(-1)

    return ZooOp("m_spectrogram", lambda: Fn(fn),
                 {"float32": (values((2, 64), "float32", 240),)}, ["stft", "_fft_r2c"], loose=10)


def family_ops() -> list[ZooOp]:
    return [r2c_op(), c2r_op(), conj_op(), spectrogram_op()]
