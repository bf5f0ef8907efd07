"""Counted cost of one streamed frame (a multiply-add counts 2 FLOP; element-wise ops 1 each).

Run: python3 -m edgetap.flops (from training/) prints the table used in models/README.md.
"""
from .model import EdgeTap, EdgeTapConfig, correlation_reads


def encoder_flops(cfg, H, W):
    c2, c4, c8, c16, c32 = cfg.enc_channels
    D = cfg.feat_dim
    convs = [  # (k, cin, cout, stride of the output)
        (3, 3, c2, 2), (3, c2, c4, 4), (3, c4, c4, 4), (3, c4, c8, 8), (3, c8, c8, 8),
        (3, c8, c16, 16), (3, c16, c16, 16), (3, c16, c16, 16), (3, c16, c32, 32),
        (1, c4, D, 4), (1, c8, D, 8), (1, c16, D, 16), (1, c32, D, 32)]
    if 2 in cfg.strides:                                      # the stride-2 side branch and lateral
        convs += [(3, c2, c2, 2), (1, c2, D, 2)]
    f = 0
    for k, ci, co, s in convs:
        px = (H // s) * (W // s)
        f += 2 * k * k * ci * co * px + 2 * co * px           # MACs + bias + ReLU/residual
    for s in [s for s in cfg.strides if s != 32]:             # upsample2 + top-down sum
        f += 3 * D * (H // s) * (W // s)
    return f


def track_flops(cfg):
    """Per track per streamed frame (all iterations)."""
    D, d, k2 = cfg.feat_dim, cfg.width, (2 * cfg.radius + 1) ** 2
    L = len(cfg.strides)
    P = cfg.query_patch ** 2
    # each level's window sampled once (D channels, bilinear), then P dot products per read
    corr = L * k2 * 7 * D + len(correlation_reads(cfg)) * k2 * 2 * D * P
    corr_mlp = 2 * (cfg.n_corr * cfg.corr_hidden + cfg.corr_hidden * cfg.corr_hidden) + 8 * cfg.corr_hidden
    tok = 2 * cfg.token_in * d + 8 * cfg.n_freq
    keys = cfg.window + 1
    blk = (2 * d * 3 * d + 2 * 2 * d * keys + 5 * cfg.heads * keys + 2 * d * d
           + 2 * 2 * d * cfg.mlp_ratio * d + 8 * cfg.mlp_ratio * d + 2 * 8 * d)
    head = 8 * d + 2 * d * 4
    per_iter = corr + corr_mlp + tok + cfg.blocks * blk + head
    recent = L * P * 7 * D if cfg.recent_descriptors else 0   # once a frame: sampled at the output
    return dict(corr=corr, corr_mlp=corr_mlp, token=tok, blocks=cfg.blocks * blk, head=head,
                per_iter=per_iter, recent=recent, total=cfg.iters * per_iter + recent)


def cross_flops(cfg, n_tracks):
    """Cross-track layers of one streamed frame (all iterations): per layer, LN + qkv + proj per
    track, and attention between every pair of tracks (quadratic in the number of tracks)."""
    d, n = cfg.width, n_tracks
    layer = n * (8 * d + 2 * d * 3 * d + 2 * d * d + d) + 2 * 2 * n * n * d + 5 * cfg.heads * n * n
    return cfg.iters * len(cfg.cross_after) * layer


def frame_flops(cfg, H, W, n_tracks):
    e = encoder_flops(cfg, H, W)
    t = track_flops(cfg)["total"] * n_tracks
    c = cross_flops(cfg, n_tracks)
    return dict(encoder=e, tracks=t, cross=c, total=e + t + c)


def state_floats_per_track(cfg):
    """Streaming state kept per track (floats): descriptors (query and recent), positions, K/V caches (ring + anchor)."""
    return cfg.descriptor_sets * len(cfg.strides) * cfg.query_patch ** 2 * cfg.feat_dim + 2 + 2 + cfg.iters * cfg.blocks * 2 * (cfg.window + 1) * cfg.width


def param_breakdown(cfg):
    """Parameters of the exported network (BatchNorm folded) by part."""
    m = EdgeTap(cfg).fold_bn_()
    t = m.tracker
    n = lambda mod: sum(p.numel() for p in mod.parameters())   # noqa: E731
    out = dict(encoder=n(m.encoder), corr_mlp=n(t.corr1) + n(t.corr2), token=n(t.inp), blocks=n(t.blocks),
               cross=n(t.cross))
    out["rest"] = n(m) - sum(out.values())
    out["total"] = n(m)
    return out


if __name__ == "__main__":
    # python3 -m edgetap.flops [MODEL_JSON]   (default: the shipped models/edgetap-small.json)
    import json
    import os
    import sys
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "edgetap-small.json")
    cfg = EdgeTapConfig.from_dict(json.load(open(path))["config"])
    print(f"{os.path.normpath(path)}: query_patch {cfg.query_patch}, blocks {cfg.blocks}, width {cfg.width}")
    print("parameters (BatchNorm folded):", param_breakdown(cfg))
    print("per track per frame:", track_flops(cfg))
    for s in (192, 256, 320, 384):
        for n in (256, 1024):
            f = frame_flops(cfg, s, s, n)
            print(f"{s}x{s} {n:5d} tracks: encoder {f['encoder'] / 1e9:.3f} + tracks {f['tracks'] / 1e9:.3f}"
                  f" + cross-track {f['cross'] / 1e9:.3f} = {f['total'] / 1e9:.3f} GFLOP")
    print("state floats per track:", state_floats_per_track(cfg))
