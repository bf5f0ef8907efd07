"""The EdgeTAP network: CNN pyramid encoder, local correlation, causal temporal transformer.

Two forwards compute the same function (tests/test_model.py checks it):
  * `EdgeTap.forward_parallel` - all frames of a clip at once, used for training; given the
    initial estimate of every (track, frame), the causal attention mask reproduces streaming.
  * `engine.StreamingTracker` - one frame at a time with key/value caches, the reference
    for the C++ engine (engine/STREAMING.md describes it op by op).

Coordinates: pixels of the model input, pixel centers at integer coordinates, x right, y down.
A pyramid level of stride s holds feature cell (u, v) at image position (s*u, s*v), so an image
point p maps to feature coordinates p / s (see engine/STREAMING.md "Conventions").
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .sampling import FeatureTable, bilinear_sample, to_grid, window_correlation, window_features, window_offsets


PYRAMID_STRIDES = (4, 8, 16, 32)       # the encoder's levels
FINE_PYRAMID_STRIDES = (2, 4, 8, 16, 32)   # the same with the stride-2 level


@dataclass
class EdgeTapConfig:
    version: str = "edgetap-v1"
    # encoder widths at strides 2, 4, 8, 16, 32
    enc_channels: tuple = (32, 48, 96, 128, 128)
    feat_dim: int = 64            # D: channels of every pyramid level
    strides: tuple = PYRAMID_STRIDES  # or FINE_PYRAMID_STRIDES: a stride-2 level from the stem
    radius: int = 3               # correlation window (2r+1)^2 per level
    query_patch: int = 1          # query neighbourhood, side in level cells: 1 = one descriptor per
                                  # level; 3 = 3x3 descriptors, each against the whole window (local 4D)
    width: int = 128              # transformer width
    heads: int = 4
    blocks: int = 3
    mlp_ratio: int = 4
    iters: int = 3                # refinement iterations per frame (shared weights)
    window: int = 8               # causal window W: the current frame and W-1 before it (+ the anchor)
    cross_after: tuple = ()       # temporal blocks followed by a cross-track attention layer (the
                                  # tracks of a clip, same frame); () in edgetap-v1..v4
    entry_velocity: float = 0.0   # a frame's entering estimate: the previous output plus this much of
                                  # its last displacement (0, the previous output, in the models before round 24)
    recent_descriptors: bool = False  # a second descriptor set per track, sampled at its output in the
                                  # previous frame (where the frame enters: entry_velocity must be 0) and
                                  # correlated beside the query's; False in the models before round 25
    cross_scale: bool = False     # the query's descriptors of each level also against the window of the
                                  # next coarser level (the point's surroundings grown about 2x since the
                                  # query) and of the next finer one (shrunk), behind the same-level
                                  # correlations (correlation_reads); False in the models before round 27
    n_freq: int = 4               # Fourier frequencies of the displacement encoding
    disp_scale: float = 64.0      # displacement (pixels) is divided by this before encoding
    corr_hidden: int = 128
    pixel_mean: float = 0.5       # input = (rgb / 255 - mean) / std, RGB order
    pixel_std: float = 0.25
    size_multiple: int = 32       # input height and width must be multiples of this

    @property
    def descriptor_sets(self):
        """Descriptor sets each track correlates: the query's, and the recent ones."""
        return 2 if self.recent_descriptors else 1

    @property
    def windowed(self):
        """Whether the correlation reads windows of feature rows (sample_corr_patch) rather than
        whole correlation maps (corr_maps, the single-descriptor network)."""
        return self.query_patch > 1 or self.recent_descriptors or self.cross_scale

    @property
    def n_corr(self):
        return len(correlation_reads(self)) * self.query_patch ** 2 * (2 * self.radius + 1) ** 2

    @property
    def token_in(self):
        return self.corr_hidden + 2 + 4 * self.n_freq + 1

    def to_dict(self):
        d = asdict(self)
        d["enc_channels"] = list(self.enc_channels)
        d["strides"] = list(self.strides)
        d["cross_after"] = list(self.cross_after)
        return d

    def replaced(self, overrides):
        """This configuration with the fields in `overrides` (e.g. parsed JSON) replaced;
        ValueError naming any field that does not exist."""
        d = self.to_dict()
        unknown = sorted(set(overrides) - set(d))
        if unknown:
            raise ValueError(f"unknown hyper-parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(d))}")
        return EdgeTapConfig.from_dict({**d, **overrides})

    @staticmethod
    def from_dict(d):
        d = {k: v for k, v in d.items() if k in EdgeTapConfig.__dataclass_fields__}
        for k in ("enc_channels", "strides", "cross_after"):
            if k in d:
                d[k] = tuple(d[k])
        return EdgeTapConfig(**d)


def correlation_reads(cfg):
    """The window correlations a track reads per iteration, in corr1's input order, as
    (descriptor set, descriptor level, window level): each set's descriptors against their own
    level's window, levels fine to coarse, the query's set first, then the recent one; with
    cfg.cross_scale, the query's descriptors of level l against level l+1's window (l fine to
    coarse), then against level l-1's. Each read is query_patch^2 x (2r+1)^2 values."""
    L = len(cfg.strides)
    reads = [(s, l, l) for s in range(cfg.descriptor_sets) for l in range(L)]
    if cfg.cross_scale:
        reads += [(0, l, l + 1) for l in range(L - 1)] + [(0, l, l - 1) for l in range(1, L)]
    return reads


# ----------------------------------------------------------------------------------------------
# Elementary ops with documented conventions (mirrored in engine/STREAMING.md)

def upsample2(x):
    """[..., H, W] -> [..., 2H, 2W]: out[2i] = in[i], out[2i+1] = (in[i] + in[min(i+1, n-1)]) / 2,
    separably (rows first, then columns). This is bilinear sampling at i/2 with edge clamping,
    i.e. consistent with 'cell u of stride s sits at image position s*u'."""
    nxt = torch.cat([x[..., 1:, :], x[..., -1:, :]], dim=-2)
    x = torch.stack([x, 0.5 * (x + nxt)], dim=-2).flatten(-3, -2)
    nxt = torch.cat([x[..., 1:], x[..., -1:]], dim=-1)
    return torch.stack([x, 0.5 * (x + nxt)], dim=-1).flatten(-2)


def fourier_encode(d, n_freq):
    """d [..., 2] -> [..., 2 + 4 n_freq]: [dx, dy, then for i in 0..n-1: sin(pi 2^i dx),
    sin(pi 2^i dy), cos(pi 2^i dx), cos(pi 2^i dy)]."""
    parts = [d]
    for i in range(n_freq):
        a = d * (math.pi * 2.0 ** i)
        parts += [torch.sin(a), torch.cos(a)]
    return torch.cat(parts, dim=-1)


# ----------------------------------------------------------------------------------------------
# Encoder

class ConvBN(nn.Module):
    """3x3 (or 1x1) conv, zero padding k//2, then BatchNorm (folded into the conv at export)."""

    def __init__(self, cin, cout, stride=1, k=3):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return self.bn(self.conv(x))

    @torch.no_grad()
    def fold_(self):
        if isinstance(self.bn, nn.Identity):
            return
        bn, c = self.bn, self.conv
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        conv = nn.Conv2d(c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding, bias=True)
        conv.weight.copy_(c.weight * scale[:, None, None, None])
        conv.bias.copy_(bn.bias - bn.running_mean * scale)
        self.conv = conv.to(c.weight.device)
        self.bn = nn.Identity()


class Encoder(nn.Module):
    """Strides 2-4-8-16-32; residual 3x3 blocks; top-down sums into D-channel levels 4/8/16/32.
    With stride 2 among the levels (`strides` starting at 2), the stem's output also feeds a side
    branch, relu(x + fine2(x)), whose 1x1 lateral plus the upsampled stride-4 level is the stride-2
    level; the branch is off the backbone's path, so the coarser levels do not depend on it."""

    def __init__(self, cfg):
        super().__init__()
        c2, c4, c8, c16, c32 = cfg.enc_channels
        D = cfg.feat_dim
        self.stem = ConvBN(3, c2, 2)
        self.down4 = ConvBN(c2, c4, 2)
        self.res4 = ConvBN(c4, c4)
        self.down8 = ConvBN(c4, c8, 2)
        self.res8 = ConvBN(c8, c8)
        self.down16 = ConvBN(c8, c16, 2)
        self.res16a = ConvBN(c16, c16)
        self.res16b = ConvBN(c16, c16)
        self.down32 = ConvBN(c16, c32, 2)
        self.lat4 = nn.Conv2d(c4, D, 1)
        self.lat8 = nn.Conv2d(c8, D, 1)
        self.lat16 = nn.Conv2d(c16, D, 1)
        self.lat32 = nn.Conv2d(c32, D, 1)
        self.fine = tuple(cfg.strides) == FINE_PYRAMID_STRIDES
        if not self.fine and tuple(cfg.strides) != PYRAMID_STRIDES:
            raise ValueError(f"strides {list(cfg.strides)}: the encoder makes {list(PYRAMID_STRIDES)} or "
                             f"{list(FINE_PYRAMID_STRIDES)}")
        if self.fine:
            self.fine2 = ConvBN(c2, c2)
            self.lat2 = nn.Conv2d(c2, D, 1)
        self.cfg = cfg

    def forward(self, img):
        """img [B, 3, H, W] RGB in [0, 255] (float) -> [f4, f8, f16, f32] (f2 first with the stride-2
        level), each [B, D, H/s, W/s]."""
        cfg = self.cfg
        x = (img * (1.0 / 255.0) - cfg.pixel_mean) * (1.0 / cfg.pixel_std)
        x = F.relu(self.stem(x))
        c4 = F.relu(self.down4(x))
        c4 = F.relu(c4 + self.res4(c4))
        c8 = F.relu(self.down8(c4))
        c8 = F.relu(c8 + self.res8(c8))
        c16 = F.relu(self.down16(c8))
        c16 = F.relu(c16 + self.res16a(c16))
        c16 = F.relu(c16 + self.res16b(c16))
        c32 = F.relu(self.down32(c16))
        f32 = self.lat32(c32)
        f16 = self.lat16(c16) + upsample2(f32)
        f8 = self.lat8(c8) + upsample2(f16)
        f4 = self.lat4(c4) + upsample2(f8)
        if not self.fine:
            return [f4, f8, f16, f32]
        f2 = self.lat2(F.relu(x + self.fine2(x))) + upsample2(f4)
        return [f2, f4, f8, f16, f32]


# ----------------------------------------------------------------------------------------------
# Temporal transformer

def split_heads(qkv, heads):
    """qkv [..., 3d] -> q, k, v each [..., heads, d/heads] (heads: contiguous channel blocks)."""
    q, k, v = qkv.chunk(3, dim=-1)
    shp = q.shape[:-1] + (heads, q.shape[-1] // heads)
    return q.reshape(shp), k.reshape(shp), v.reshape(shp)


class Block(nn.Module):
    """Pre-LN transformer block: x += Wo MHA(LN1 x) with relative-time bias; x += MLP(LN2 x)."""

    def __init__(self, d, heads, ratio):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ratio * d)
        self.fc2 = nn.Linear(ratio * d, d)

    def mlp(self, x):
        return self.fc2(F.gelu(self.fc1(self.ln2(x))))

    def qkv_split(self, x):
        """x [..., d] -> q, k, v each [..., heads, d/heads]."""
        return split_heads(self.qkv(self.ln1(x)), self.heads)

    def forward(self, x, bias):
        """x [S, T, d]; bias [S, heads, T, T] additive (-inf = not attended)."""
        S, T, d = x.shape
        q, k, v = self.qkv_split(x)                          # [S, T, h, dh]
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))     # [S, h, T, dh]
        att = (q @ k.transpose(-1, -2)).float() * (q.shape[-1] ** -0.5) + bias
        att = att.softmax(dim=-1).to(v.dtype)
        o = (att @ v).transpose(1, 2).reshape(S, T, d)
        x = x + self.proj(o)
        return x + self.mlp(x)


class CrossTrack(nn.Module):
    """Pre-LN attention across the tracks of one clip in one frame: x += Wo MHA(LN x). A track
    attends to itself and to every track started before this frame (query frame < the frame);
    a track at its query frame (or before it) attends to itself only and no other track attends
    to it (its output is the query point anyway). No time mixing, so streaming computes it
    frame by frame without caches."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x, started):
        """x [G, N, d] (G = clips x frames); started [G, N] bool (query frame < the frame) -> [G, N, d]."""
        G, N, d = x.shape
        h = self.heads
        q, k, v = (t.transpose(1, 2) for t in split_heads(self.qkv(self.ln(x)), h))   # [G, h, N, dh]
        att = (q @ k.transpose(-1, -2)).float() * ((d // h) ** -0.5)            # [G, h, N, N]
        both = started[:, None, :, None] & started[:, None, None, :]          # query and key started
        ok = both | torch.eye(N, dtype=torch.bool, device=x.device)[None, None]
        att = att.masked_fill(~ok, float("-inf")).softmax(dim=-1).to(v.dtype)
        return x + self.proj((att @ v).transpose(1, 2).reshape(G, N, d))


class Tracker(nn.Module):
    """Per (track, frame, iteration) token from correlation and displacement; causal blocks; heads."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg.width
        self.corr1 = nn.Linear(cfg.n_corr, cfg.corr_hidden)
        self.corr2 = nn.Linear(cfg.corr_hidden, cfg.corr_hidden)
        self.inp = nn.Linear(cfg.token_in, d)
        self.h0 = nn.Parameter(torch.zeros(d))
        self.rel_bias = nn.Parameter(torch.zeros(cfg.heads, cfg.window + 1))
        self.blocks = nn.ModuleList([Block(d, cfg.heads, cfg.mlp_ratio) for _ in range(cfg.blocks)])
        self.cross = nn.ModuleList([CrossTrack(d, cfg.heads) for _ in cfg.cross_after])
        self.ln_out = nn.LayerNorm(d)
        self.head = nn.Linear(d, 4)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)
        self.cfg = cfg

    def token(self, corr, p, pq, is_anchor):
        """corr [..., n_corr], p/pq [..., 2] (pixels), is_anchor [...] bool -> [..., width]."""
        c = self.corr2(F.gelu(self.corr1(corr)))
        enc = fourier_encode((p - pq) * (1.0 / self.cfg.disp_scale), self.cfg.n_freq)
        a = is_anchor.to(enc.dtype)[..., None]
        return self.inp(torch.cat([c, enc.to(c.dtype), a.to(c.dtype)], dim=-1))

    def cross_layer(self, block):
        """The cross-track layer that follows temporal block `block`, or None."""
        after = list(self.cfg.cross_after)
        return self.cross[after.index(block)] if block in after else None

    def readout(self, h):
        """h [..., width] -> (delta_xy [..., 2] float32, vis_logit, conf_logit)."""
        o = self.head(self.ln_out(h)).float()
        return o[..., :2], o[..., 2], o[..., 3]


class EdgeTap(nn.Module):
    def __init__(self, cfg=None):
        super().__init__()
        self.cfg = cfg or EdgeTapConfig()
        if self.cfg.recent_descriptors and self.cfg.entry_velocity != 0:
            raise ValueError("recent_descriptors are sampled where a frame enters, the previous output: "
                             f"they need entry_velocity 0, not {self.cfg.entry_velocity}")
        self.encoder = Encoder(self.cfg)
        self.tracker = Tracker(self.cfg)
        self.graph_entries = False    # training: the streaming-entries pass as CUDA graphs

    def fold_bn_(self):
        for m in self.encoder.modules():
            if isinstance(m, ConvBN):
                m.fold_()
        return self

    # ---- parallel (training) forward ----------------------------------------------------------

    def attn_bias(self, tq, T):
        """tq [S] long -> [S, heads, T, T] additive bias of the causal window + anchor mask.
        Frame t attends to frame s iff s >= tq and (t-W < s <= t, or s == tq <= t).
        Bias index: t - s inside the window, W for the anchor beyond it."""
        W = self.cfg.window
        dev = tq.device
        t = torch.arange(T, device=dev)[:, None]
        s = torch.arange(T, device=dev)[None, :]
        delta = t - s
        idx = delta.clamp(0, W)
        bias = self.tracker.rel_bias.float()[:, idx]                  # [h, T, T]
        tq_ = tq[:, None, None]
        valid = (s[None] >= tq_) & (((delta >= 0) & (delta < W))[None] | ((s[None] == tq_) & (delta[None] >= 0)))
        # frames before the query frame: attend to themselves only (their outputs are unused)
        valid = valid | ((t == s)[None] & (t[None] < tq_))
        return bias[None].masked_fill(~valid[:, None], float("-inf"))

    def corr_maps(self, feats, tq, pq):
        """feats: levels [B*T, D, H, W]; tq [B, N]; pq [B, N, 2].
        Returns query descriptors per level [B, N, D] and correlation maps [B*N*T, 1, H, W] (fp32)."""
        B, N = tq.shape
        T = feats[0].shape[0] // B
        D = self.cfg.feat_dim
        descs, maps = [], []
        for f, s in zip(feats, self.cfg.strides):
            h, w = f.shape[-2:]
            pts = (pq / s)[:, None].expand(B, T, N, 2).reshape(B * T, N, 2)
            allq = bilinear_sample(f, pts).reshape(B, T, N, D)
            q = torch.gather(allq, 1, tq[:, None, :, None].expand(B, 1, N, D))[:, 0]    # [B, N, D]
            descs.append(q)
            fb = f.reshape(B, T, D, h * w).transpose(1, 2).reshape(B, D, T * h * w)
            cm = torch.matmul(q.to(fb.dtype), fb) * (D ** -0.5)                         # [B, N, T*h*w]
            maps.append(cm.float().reshape(B * N * T, 1, h, w))
        return descs, maps

    def sample_corr(self, maps, p):
        """maps from corr_maps; p [B, N, T, 2] pixels -> [B, N, T, n_corr]."""
        B, N, T, _ = p.shape
        r = self.cfg.radius
        k = 2 * r + 1
        off = window_offsets(r, p.device).reshape(k, k, 2)
        out = []
        for m, s in zip(maps, self.cfg.strides):
            h, w = m.shape[-2:]
            g = (p.reshape(B * N * T, 1, 1, 2) / s) + off
            v = F.grid_sample(m, to_grid(g, h, w), mode="bilinear", padding_mode="zeros", align_corners=True)
            out.append(v.reshape(B, N, T, k * k))
        return torch.cat(out, dim=-1)

    def query_descriptors(self, tables, tq, pq):
        """Descriptors per level [B, N, P, D] sampled around each query point in its query frame.
        tables: FeatureTable per level of the clips' frames ([B*T] maps, frames of a clip
        consecutive)."""
        B, N = tq.shape
        T = tables[0].frames // B
        frame = torch.arange(B, device=tq.device)[:, None] * T + tq                  # [B, N]
        return [window_features(tab, frame, pq / s, self.cfg.query_patch // 2)
                for tab, s in zip(tables, self.cfg.strides)]

    def sample_corr_patch(self, tables, descs, p, recent=None):
        """Local 4D correlation (query_patch > 1, recent descriptors or cross_scale): the reads of
        correlation_reads, each a window of features around p (read as a patch, never a full map)
        against a level's query descriptors (per level [B, N, P, D]) or, with `recent` (per level
        [B, N, T, P, D]), each frame's recent descriptors. p [B, N, T, 2] -> [B, N, T, n_corr]."""
        B, N, T, _ = p.shape
        frame = (torch.arange(B, device=p.device)[:, None] * T + torch.arange(T, device=p.device))[:, None]
        sets = [[d[:, :, None] for d in descs]] + ([recent] if recent is not None else [])
        return torch.cat([window_correlation(tables[m], frame, p / self.cfg.strides[m], sets[s][l], self.cfg.radius)
                          for s, l, m in correlation_reads(self.cfg)], dim=-1)

    def recent_descriptors(self, tables, tq, descs, p):
        """Per level [B, N, T, P, D]: the descriptors each track's frame t correlates beside its
        query's, sampled in frame t-1 at p[t] (the estimate frame t enters with: the previous
        output when streaming); up to the query frame, the query's own (descs, per level
        [B, N, P, D]). p [B, N, T, 2] with the query point at the query frame."""
        B, N, T, _ = p.shape
        t = torch.arange(T, device=p.device)
        prev = (torch.arange(B, device=p.device)[:, None] * T + (t - 1).clamp(min=0))[:, None, :].expand(B, N, T)
        from_query = (t[None, None, :] <= tq[:, :, None])[..., None, None]
        return [torch.where(from_query, q[:, :, None], window_features(tab, prev, p / s, self.cfg.query_patch // 2))
                for tab, s, q in zip(tables, self.cfg.strides, descs)]

    def match_correlations(self, tables, descs, tracks):
        """The target of losses.match_loss: per level l, the centre query descriptor of level l
        against level l's (2r+1)^2 window centred on the true positions tracks [B, N, T, 2], as the
        network's correlation reads it ([B, N, T, (2r+1)^2], / sqrt(D)), and the scale that makes
        its centre cell a cosine, |q| |f(true)| / sqrt(D) ([B, N, T], no gradient)."""
        B, N, T, _ = tracks.shape
        r = self.cfg.radius
        frame = (torch.arange(B, device=tracks.device)[:, None] * T + torch.arange(T, device=tracks.device))[:, None]
        out = []
        for tab, s, d in zip(tables, self.cfg.strides, descs):
            q = d[:, :, d.shape[2] // 2]                                              # [B, N, D]
            xy = tracks.detach() / s
            corr = window_correlation(tab, frame, xy, q[:, :, None, None], r)
            with torch.no_grad():
                f = window_features(tab, frame.expand(B, N, T), xy, 0)[..., 0, :]     # [B, N, T, D]
                scale = f.float().norm(dim=-1) * q.float().norm(dim=-1)[:, :, None] * (tab.dim ** -0.5)
            out.append((corr, scale))
        return out

    def forward_parallel(self, video, tq, pq, p_init, iters=None, feats=None, match_at=None):
        """video [B, T, 3, H, W] in [0, 255]; tq [B, N] long; pq [B, N, 2]; p_init [B, N, T, 2]
        (estimate entering iteration 0 of each frame; the caller puts pq at t == tq). With
        recent_descriptors, frame t's are sampled in frame t-1 at p_init[t], its previous output.
        Returns positions [K, B, N, T, 2], vis logits [K, B, N, T], conf logits [K, B, N, T]; with
        match_at (the true tracks [B, N, T, 2]) also match_correlations' list at them."""
        cfg = self.cfg
        B, T = video.shape[:2]
        N = tq.shape[1]
        K = iters or cfg.iters
        if feats is None:
            feats = self.encoder(video.flatten(0, 1))
        windows = cfg.windowed
        if match_at is not None and not windows:
            raise ValueError("match_at needs the windowed correlation (EdgeTapConfig.windowed)")
        if windows:
            tables = [FeatureTable(f) for f in feats]
            descs = self.query_descriptors(tables, tq, pq)
        else:
            _, maps = self.corr_maps(feats, tq, pq)
        tr = self.tracker
        S = B * N
        bias = self.attn_bias(tq.reshape(S), T)
        tt = torch.arange(T, device=tq.device)
        is_q = (tt[None, None, :] == tq[:, :, None])                         # [B, N, T]
        started = (tq[:, None, :] < tt[None, :, None])                       # [B, T, N]
        pq_t = pq[:, :, None, :].expand(B, N, T, 2)
        p = torch.where(is_q[..., None], pq_t, p_init.float())
        h = tr.h0.expand(B, N, T, cfg.width)
        recent = self.recent_descriptors(tables, tq, descs, p.detach()) if cfg.recent_descriptors else None
        ps, vs, cs = [], [], []
        for _ in range(K):
            p = p.detach()
            corr = self.sample_corr_patch(tables, descs, p, recent) if windows else self.sample_corr(maps, p)
            x = tr.token(corr, p, pq_t, is_q) + h
            x = x.reshape(S, T, cfg.width)
            for bi, blk in enumerate(tr.blocks):
                x = blk(x, bias)
                cross = tr.cross_layer(bi)
                if cross is not None:
                    per_frame = x.reshape(B, N, T, cfg.width).transpose(1, 2).reshape(B * T, N, cfg.width)
                    per_frame = cross(per_frame, started.reshape(B * T, N))
                    x = per_frame.reshape(B, T, N, cfg.width).transpose(1, 2).reshape(S, T, cfg.width)
            h = x.reshape(B, N, T, cfg.width)
            dp, vis, conf = tr.readout(h)
            p = torch.where(is_q[..., None], pq_t, p + dp)
            ps.append(p)
            vs.append(vis)
            cs.append(conf)
        if match_at is not None:
            return torch.stack(ps), torch.stack(vs), torch.stack(cs), self.match_correlations(tables, descs, match_at)
        return torch.stack(ps), torch.stack(vs), torch.stack(cs)


    def forward(self, video, tq, pq, p_init, self_mask=None, match_at=None):
        """Training forward. With `self_mask` [B, N] bool, those tracks enter each frame with the
        estimate streaming would give them: the model's own output for the previous frame, from a
        no-grad streaming pass over the same features (engine.streaming_entries), so the loss is
        taken exactly where inference goes, drift included. The other tracks enter with p_init
        (e.g. noisy ground truth). With `graph_entries` set, on a GPU, that pass replays a CUDA
        graph per frame (graphed_entries.py). Returns forward_parallel's (match_at: see there)."""
        from .engine import streaming_entries
        feats = self.encoder(video.flatten(0, 1).contiguous(memory_format=torch.channels_last))
        if self_mask is not None:
            entries = streaming_entries
            if self.graph_entries and video.is_cuda:
                from .graphed_entries import graphed_streaming_entries as entries
            own = entries(self, [f.detach().contiguous() for f in feats], tq, pq)
            p_init = torch.where(self_mask[:, :, None, None], own, p_init)
        return self.forward_parallel(video, tq, pq, p_init, feats=feats, match_at=match_at)


def count_params(model):
    return sum(p.numel() for p in model.parameters())
