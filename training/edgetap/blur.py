"""Blurs for the clip synthesizer: separable Gaussians with one sigma per image, and the streak
of an image moving during the exposure."""
import math

import torch
import torch.nn.functional as F

from .geometry import pixel_grid


def gaussian_taps(sigma, radius):
    """Normalized 1-D Gaussian kernels [B, 2 radius + 1] for sigma [B] (sigma 0: the identity)."""
    r = torch.arange(-radius, radius + 1, device=sigma.device, dtype=torch.float32)
    k = torch.exp(-0.5 * (r[None] / sigma.clamp(min=1e-3)[:, None]) ** 2)
    k = torch.where(sigma[:, None] > 0, k, (r[None] == 0).float())
    return k / k.sum(-1, keepdim=True)


def separable_blur(x, taps, pad_mode):
    """x [N, G, H, W] blurred along W, then H, with taps [G, 2r+1] (one kernel per channel),
    edges padded by `pad_mode` -> [N, G, H, W]."""
    G, n = taps.shape
    r = n // 2
    k = taps.reshape(G, 1, 1, n)
    x = F.conv2d(F.pad(x, (r, r, 0, 0), mode=pad_mode), k, groups=G)
    return F.conv2d(F.pad(x, (0, 0, r, r), mode=pad_mode), k.transpose(-1, -2), groups=G)


def defocus(video, sigma):
    """Per-clip defocus: video [B, T, C, H, W], sigma [B] (0 = none), 5 taps, replicated edges."""
    B, T, C, H, W = video.shape
    taps = gaussian_taps(sigma, 2)[:, None].expand(B, C, 5).reshape(B * C, 5)
    x = separable_blur(video.permute(1, 0, 2, 3, 4).reshape(T, B * C, H, W), taps, "replicate")
    return x.reshape(T, B, C, H, W).permute(1, 0, 2, 3, 4)


def blur_images(x, sigma):
    """x [B, C, H, W], sigma [B] > 0: a 3-sigma Gaussian blur per image, reflected edges."""
    B, C, H, W = x.shape
    taps = gaussian_taps(sigma, int(math.ceil(3 * float(sigma.max())))).repeat_interleave(C, 0)
    return separable_blur(x.reshape(1, B * C, H, W), taps, "reflect").reshape(B, C, H, W)


def streak(img, vel, max_taps=33):
    """The exposure of frames img [B, T, C, H, W] translating at vel [B, T, 2] px per exposure:
    each frame averaged along its own velocity, over taps <= 1.5 px apart, centred on the frame."""
    B, T, C, H, W = img.shape
    longest = float(vel.norm(dim=-1).max())
    if longest < 0.5:
        return img
    taps = int(min(max_taps, max(3, math.ceil(longest / 1.5) + 1)))
    dev = img.device
    pix = pixel_grid(W, H, dev).reshape(1, H, W, 2)
    to_grid = torch.tensor([2.0 / (W - 1), 2.0 / (H - 1)], device=dev)
    x = img.reshape(B * T, C, H, W)
    v = vel.reshape(B * T, 1, 1, 2)
    acc = torch.zeros_like(x)
    for f in torch.linspace(-0.5, 0.5, taps).tolist():
        g = (pix - f * v) * to_grid - 1.0
        acc = acc + F.grid_sample(x, g, mode="bilinear", padding_mode="border", align_corners=True)
    return (acc / taps).reshape(B, T, C, H, W)
