"""Training targets: initial estimates that mimic streaming, and the loss."""
import torch
import torch.nn.functional as F


def noisy_init(tracks, tq, S, drift=True, velocity=0.0):
    """Entering estimate of frame t (the streaming engine enters frame t with its own estimate of
    t-1, extrapolated by `velocity` of its last displacement, EdgeTapConfig.entry_velocity):
    ground truth of frame t-1 (plus `velocity` times its step from t-2, from frame tq+2 on) plus
    an error drawn per track from three kinds, in 256-scaled px:
      * i.i.d. jitter (sigma 0.3-2.7 px) on every frame;
      * a constant offset (0-8 px), as when an estimate has settled on a wrong neighbour;
      * a random walk starting at frame tq+2 (0.2-2 px per frame, capped at 24 px), as when the
        estimate slides off the point frame after frame (the drift streaming must undo).
    Plus rare 12 px jumps. tracks [B, N, T, 2] -> [B, N, T, 2]; frames <= tq+1 enter at the query."""
    B, N, T, _ = tracks.shape
    dev = tracks.device
    sc = S / 256.0
    prev = torch.cat([tracks[:, :, :1], tracks[:, :, :-1]], dim=2)
    if velocity:
        prev2 = torch.cat([prev[:, :, :1], prev[:, :, :-1]], dim=2)
        prev = prev + velocity * (prev - prev2)
    sigma = torch.exp(torch.empty(B, N, 1, 1, device=dev).uniform_(-1.2, 1.0)) * sc
    noise = torch.randn(B, N, T, 2, device=dev) * sigma
    big = (torch.rand(B, N, T, 1, device=dev) < 0.04).float()
    noise = noise + big * torch.randn(B, N, T, 2, device=dev) * 12.0 * sc
    tt = torch.arange(T, device=dev)[None, None, :, None]
    tq_ = tq[:, :, None, None]
    if drift:
        mode = torch.rand(B, N, 1, 1, device=dev)
        const = torch.randn(B, N, 1, 2, device=dev) * torch.empty(B, N, 1, 1, device=dev).uniform_(0, 8.0) * sc
        step = torch.exp(torch.empty(B, N, 1, 1, device=dev).uniform_(-1.5, 0.7)) * sc
        eps = torch.randn(B, N, T, 2, device=dev) * step * (tt > tq_ + 1).float()
        walk = torch.cumsum(eps, dim=2)
        n = walk.norm(dim=-1, keepdim=True).clamp(min=1e-6)
        walk = walk * (24.0 * sc / n).clamp(max=1.0)
        noise = noise + torch.where(mode < 0.35, const, torch.zeros_like(const)) \
            + torch.where(mode > 0.65, walk, torch.zeros_like(walk))
    p = prev + noise
    pq = torch.gather(tracks, 2, tq[:, :, None, None].expand(B, N, 1, 2))
    return torch.where(tt <= tq_ + 1, pq.expand(B, N, T, 2), p)


POSITION_SLOPE = 4.0
"""Slope of the position loss beyond its quadratic zone, per 256-scaled px of error."""


def position_loss(err, quadratic_zone):
    """Per-coordinate position loss of errors `err` (256-scaled px): quadratic below
    `quadratic_zone` px, linear with slope POSITION_SLOPE beyond it. A narrower zone leaves large
    errors weighed as before and pulls harder on the small ones (at 4 px it is rounds 1-25's
    Huber loss with delta 4)."""
    return POSITION_SLOPE * F.smooth_l1_loss(err, torch.zeros_like(err), reduction="none", beta=quadratic_zone)


def tracking_loss(ps, vis_l, conf_l, tracks, vis, tq, S, gamma=0.8, huber=4.0,
                  occ_weight=0.2, w_vis=2.0, w_conf=1.0, known=None):
    """ps [K, B, N, T, 2]; vis_l/conf_l [K, B, N, T]; tracks [B, N, T, 2]; vis [B, N, T] bool.
    Errors are measured in 256-scaled pixels so every input size weighs the same; `huber` is the
    position loss's quadratic zone (position_loss). known [B, N, T] bool (pseudo-labels,
    realclips.py): positions and confidence are scored only there, and visibility not at all."""
    K = ps.shape[0]
    T = tracks.shape[2]
    scale = 256.0 / S
    dev = tracks.device
    after = (torch.arange(T, device=dev)[None, None, :] > tq[:, :, None]).float()
    visf = vis.float()
    w_pos = after * (visf + occ_weight * (1 - visf))
    if known is not None:
        after = after * known.float()
        w_pos = w_pos * known.float()
        w_vis = 0.0
    n_pos = w_pos.sum().clamp(min=1)
    n_after = after.sum().clamp(min=1)
    pos, bce = 0.0, 0.0
    for k in range(K):
        wk = gamma ** (K - 1 - k)
        err = (ps[k] - tracks) * scale
        h = position_loss(err, huber).sum(-1)
        pos = pos + wk * (h * w_pos).sum() / n_pos
        if w_vis:
            b = F.binary_cross_entropy_with_logits(vis_l[k], visf, reduction="none")
            bce = bce + wk * (b * after).sum() / n_after
    with torch.no_grad():
        dist = ((ps[-1] - tracks) * scale).norm(dim=-1)
        good = ((dist < 4.0) & vis).float()
    c = F.binary_cross_entropy_with_logits(conf_l[-1], good, reduction="none")
    conf = (c * after).sum() / n_after
    loss = pos + w_vis * bce + w_conf * conf
    with torch.no_grad():
        vis_after = (vis.float() * after).sum().clamp(min=1)
        stats = dict(
            loss=loss.detach(), pos=pos.detach(), vis=torch.as_tensor(bce, device=dev).detach(), conf=conf.detach(),
            d_avg=sum(((dist < th).float() * visf * after).sum() / vis_after for th in (1, 2, 4, 8, 16)) / 5,
        )
    return loss, stats


def match_loss(matches, vis, tq, tau=0.1):
    """Descriptor matching, beside the tracking loss (train.py --match-weight): at every visible
    frame other than the query's, each level's centre query descriptor should correlate best with
    the feature at the point's true position among the (2r+1)^2 window cells around it.
    matches: per level (corr [B, N, T, (2r+1)^2] centred on the truth, scale [B, N, T]) from
    model.match_correlations; the logits are corr / scale / tau, cosines for the centre cell, so
    scaling the features up cannot lower the loss. Returns the cross-entropy towards the centre
    cell, averaged over levels, and per level the share of frames whose best cell is the centre."""
    T = vis.shape[2]
    mask = (vis & (torch.arange(T, device=vis.device)[None, None, :] != tq[:, :, None])).float()
    n = mask.sum().clamp(min=1)
    total, top1 = 0.0, []
    for corr, scale in matches:
        logits = corr.float() / (scale[..., None].clamp(min=1e-6) * tau)
        centre = corr.shape[-1] // 2
        target = torch.full(logits.shape[:-1], centre, device=logits.device, dtype=torch.long)
        ce = F.cross_entropy(logits.flatten(0, -2), target.flatten(), reduction="none").reshape(mask.shape)
        total = total + (ce * mask).sum() / n
        with torch.no_grad():
            top1.append(((logits.argmax(-1) == centre).float() * mask).sum() / n)
    return total / len(matches), top1
