"""Model families users deploy, each small enough to keep in the repository and shaped the
way the real ones are (issue #16 measures each side by side with ExecuTorch):

- vit: a vision transformer (patch embedding by a strided convolution, a class token,
  learned position embeddings, pre-norm encoder layers with nn.MultiheadAttention and a
  GELU MLP, a LayerNorm head);
- speech_encoder: a speech-style encoder (a Conv1d front end that subsamples log-mel
  frames, then pre-norm transformer layers written out, as Conformer/Whisper encoders are);
- mobilenet_v3: MobileNetV3-style inverted residuals (depthwise convolutions, hard-swish,
  squeeze-and-excitation with hard-sigmoid);
- convnext: ConvNeXt-style blocks (7x7 depthwise convolution, LayerNorm over channels in
  channels-last, a GELU MLP, layer scale, residual);
- unet: a small U-Net (convolutions, max pooling, a transposed convolution, nearest and
  bilinear upsampling, concatenation of skip connections);
- lstm, gru: two-layer recurrent sequence models (nn.LSTM, nn.GRU) with a linear head;
- transformer_encoder: nn.TransformerEncoder as users write it.

Each is exported portable and lowered to XNNPACK (NAME and NAME_xnnpack).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fixture_models import MethodSpec, ModelSpec, init_weights, randn


class VisionTransformer(nn.Module):
    def __init__(self, image=32, patch=8, dim=96, depth=3, heads=3, classes=10):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        tokens = (image // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, tokens + 1, dim) * 0.02)
        self.layers = nn.ModuleList(VitLayer(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x[:, 0]))


class VitLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class SpeechEncoder(nn.Module):
    """Log-mel frames (batch, mels, frames) in, one vector per subsampled frame out."""

    def __init__(self, mels=40, dim=96, depth=2, heads=4):
        super().__init__()
        self.heads = heads
        self.conv1 = nn.Conv1d(mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        self.layers = nn.ModuleList(EncoderLayer(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class EncoderLayer(nn.Module):
    """Pre-norm attention written with scaled_dot_product_attention, then a GELU MLP."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, d // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))


class InvertedResidual(nn.Module):
    def __init__(self, cin, expanded, cout, kernel, stride, se):
        super().__init__()
        self.residual = stride == 1 and cin == cout
        self.expand = nn.Sequential(nn.Conv2d(cin, expanded, 1, bias=False),
                                    nn.BatchNorm2d(expanded), nn.Hardswish())
        self.depthwise = nn.Sequential(
            nn.Conv2d(expanded, expanded, kernel, stride, kernel // 2, groups=expanded, bias=False),
            nn.BatchNorm2d(expanded), nn.Hardswish())
        self.se = SqueezeExcite(expanded, max(8, expanded // 4)) if se else nn.Identity()
        self.project = nn.Sequential(nn.Conv2d(expanded, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class MobileNetV3Style(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16),
                                  nn.Hardswish())
        self.blocks = nn.Sequential(
            InvertedResidual(16, 16, 16, 3, 2, se=True),
            InvertedResidual(16, 72, 24, 3, 2, se=False),
            InvertedResidual(24, 88, 24, 3, 1, se=False),
            InvertedResidual(24, 96, 40, 5, 2, se=True),
            InvertedResidual(40, 240, 40, 5, 1, se=True),
            InvertedResidual(40, 120, 48, 5, 1, se=True))
        self.head = nn.Sequential(nn.Conv2d(48, 144, 1, bias=False), nn.BatchNorm2d(144),
                                  nn.Hardswish())
        self.classifier = nn.Sequential(nn.Linear(144, 256), nn.Hardswish(), nn.Linear(256, classes))

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ConvNextBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 0.5))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class ConvNextStyle(nn.Module):
    def __init__(self, dims=(32, 64), classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, dims[0], 4, stride=4)
        self.stem_norm = nn.LayerNorm(dims[0], eps=1e-6)
        self.stage1 = nn.Sequential(ConvNextBlock(dims[0]), ConvNextBlock(dims[0]))
        self.down_norm = nn.LayerNorm(dims[0], eps=1e-6)
        self.down = nn.Conv2d(dims[0], dims[1], 2, stride=2)
        self.stage2 = nn.Sequential(ConvNextBlock(dims[1]), ConvNextBlock(dims[1]))
        self.norm = nn.LayerNorm(dims[1], eps=1e-6)
        self.head = nn.Linear(dims[1], classes)

    @staticmethod
    def channel_norm(norm, x):
        return norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    def forward(self, x):
        x = self.stage1(self.channel_norm(self.stem_norm, self.stem(x)))
        x = self.stage2(self.down(self.channel_norm(self.down_norm, x)))
        return self.head(self.norm(x.mean(dim=(2, 3))))


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


class UNetStyle(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.enc1 = double_conv(3, 16)
        self.enc2 = double_conv(16, 32)
        self.bottom = double_conv(32, 64)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec2 = double_conv(64, 32)
        self.dec1 = double_conv(32 + 16, 16)
        self.out = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottom(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        up1 = F.interpolate(d2, scale_factor=2.0, mode="bilinear", align_corners=False)
        d1 = self.dec1(torch.cat([up1, e1], dim=1))
        return self.out(d1) + F.interpolate(self.out(F.max_pool2d(d1, 2)), scale_factor=2.0,
                                            mode="nearest")


class Recurrent(nn.Module):
    def __init__(self, cell, features=24, hidden=64, classes=8):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


class TorchTransformerEncoder(nn.Module):
    def __init__(self, dim=64, heads=4, depth=2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def _family(name, module, inputs, exercises, atol=1e-4, rtol=1e-4, notes=""):
    def spec(suffix, **kw):
        return ModelSpec(name + suffix, [MethodSpec("forward", module, inputs, atol=atol, rtol=rtol)],
                         exercises, notes=notes, **kw)

    return [spec(""), spec("_xnnpack", delegated=True)]


def family_specs() -> list[ModelSpec]:
    specs = []
    specs += _family("vit", init_weights(VisionTransformer(), 60), (randn(2, 3, 32, 32, seed=61),),
                     ["vision_transformer", "multi_head_attention", "layer_norm", "gelu", "conv2d"])
    specs += _family("speech_encoder", init_weights(SpeechEncoder(), 62),
                     (randn(1, 40, 64, seed=63),),
                     ["conv1d", "sdpa", "layer_norm", "gelu", "linear"])
    specs += _family("mobilenet_v3", init_weights(MobileNetV3Style(), 64),
                     (randn(1, 3, 64, 64, seed=65),),
                     ["depthwise_conv2d", "hardswish", "hardsigmoid", "squeeze_excitation"])
    specs += _family("convnext", init_weights(ConvNextStyle(), 66), (randn(1, 3, 64, 64, seed=67),),
                     ["depthwise_conv2d", "layer_norm", "permute", "gelu", "mean"])
    specs += _family("unet", init_weights(UNetStyle(), 68), (randn(1, 3, 32, 32, seed=69),),
                     ["conv2d", "conv_transpose2d", "max_pool2d", "upsample_bilinear2d",
                      "upsample_nearest2d", "cat"])
    specs += _family("lstm", init_weights(Recurrent(nn.LSTM), 70), (randn(2, 16, 24, seed=71),),
                     ["lstm", "sigmoid", "tanh", "linear"])
    specs += _family("gru", init_weights(Recurrent(nn.GRU), 72), (randn(2, 16, 24, seed=73),),
                     ["gru", "sigmoid", "tanh", "linear"])
    specs += _family("transformer_encoder", init_weights(TorchTransformerEncoder(), 74),
                     (randn(2, 12, 64, seed=75),),
                     ["transformer_encoder", "multi_head_attention", "layer_norm", "gelu"])
    return specs
