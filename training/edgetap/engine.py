"""Streaming reference: one frame in, one estimate per track out (engine/STREAMING.md).

State per track: query frame tq, query point pq, query descriptors (query_patch^2 D-vectors per level),
with cfg.recent_descriptors as many more sampled at its last output in the frame it was made,
its last two outputs (the entering estimate is the last plus cfg.entry_velocity times their
difference), and per (iteration, block) the keys/values of the frames in its causal window
plus those of its anchor (query) frame. State per stream: a ring of the last W frame indices.
No past frame or feature map is kept: the correlation only ever touches the current frame.

A step writes only into the tracker's own buffers (the frame index is a device tensor) and,
made `sync_free`, never waits on the device, so one step can be captured as a CUDA graph and
replayed (`graphed_entries.py`); `restart` loads new tracks into the same buffers.
"""
import torch

from .model import correlation_reads
from .sampling import FeatureTable, window_correlation, window_features


class StreamingTracker:
    def __init__(self, model, tq, pq, record=None, sync_free=False):
        """model: EdgeTap (eval mode); tq [B, N] long query frames; pq [B, N, 2] query points in
        model-input pixels. Tracks become active at their query frame. `record`, if a dict,
        receives intermediate tensors (for golden vectors). `sync_free`: never ask the device
        whether a track starts this frame (sample the query descriptors every frame instead),
        as a CUDA graph needs."""
        self.m = model
        cfg = model.cfg
        self.cfg = cfg
        B, N = tq.shape
        dev = pq.device
        L = len(cfg.strides)
        self.tq = tq.clone()
        self.pq = pq.float().clone()
        self.frame = torch.arange(B, device=dev)[:, None].expand(B, N)     # which map each track reads
        self.desc = torch.zeros(B, N, L, cfg.query_patch ** 2, cfg.feat_dim, device=dev)
        # descriptors at the last output, in its frame (the query's at the query frame)
        self.recent = torch.zeros_like(self.desc) if cfg.recent_descriptors else None
        self.p_last = self.pq.clone()
        self.p_prev = self.pq.clone()       # the output before p_last (pq until two frames have passed)
        W, K, nb, h = cfg.window, cfg.iters, cfg.blocks, cfg.heads
        dh = cfg.width // h
        # keys/values: [K, blocks, B*N, heads, W+1, dh]; slot W holds the anchor (query) frame
        self.kc = torch.zeros(K, nb, B * N, h, W + 1, dh, device=dev)
        self.vc = torch.zeros_like(self.kc)
        self.slot_frame = torch.full((W,), -1, dtype=torch.long, device=dev)
        self.anchor_slot = torch.full((1,), W, dtype=torch.long, device=dev)
        self.t = torch.zeros((), dtype=torch.long, device=dev)           # the next frame's index
        self.record = record
        self.sync_free = sync_free

    def restart(self, tq, pq):
        """New tracks of the same shapes, from frame 0, in the same buffers."""
        self.tq.copy_(tq)
        self.pq.copy_(pq)
        self.p_last.copy_(self.pq)
        self.p_prev.copy_(self.pq)
        for buf in (self.desc, self.recent, self.kc, self.vc, self.t):
            if buf is not None:
                buf.zero_()
        self.slot_frame.fill_(-1)

    def entry(self):
        """[B, N, 2] the estimate the next frame enters with: the last output extrapolated by
        cfg.entry_velocity of its last displacement (the query point until the query frame)."""
        v = self.cfg.entry_velocity
        if v == 0:
            return self.p_last.clone()
        return self.p_last + v * (self.p_last - self.p_prev)

    def window_corr(self, tables, p):
        """Correlation of each track's descriptors with a (2r+1)^2 window around p, read from the
        current frame's features (the C++ path; never a full map), in correlation_reads' order:
        the query's descriptors against each level, then the recent ones, then (cross_scale) the
        query's against the neighbouring levels."""
        cfg = self.cfg
        sets = [self.desc] if self.recent is None else [self.desc, self.recent]
        return torch.cat([window_correlation(tables[m], self.frame, p / cfg.strides[m], sets[s][:, :, l], cfg.radius)
                          for s, l, m in correlation_reads(cfg)], dim=-1)

    def _descriptors_at(self, tables, xy):
        """[B, N, L, P, D]: each track's query_patch^2 descriptors per level around xy [B, N, 2]
        in the current frame."""
        cfg = self.cfg
        return torch.stack([window_features(tab, self.frame, xy / s, cfg.query_patch // 2)
                            for tab, s in zip(tables, cfg.strides)], dim=2)

    def _attend(self, blk, x, k_i, b_i, slot, is_q, bias):
        S = x.shape[0]
        q, k, v = blk.qkv_split(x)                                       # [S, h, dh]
        kc, vc = self.kc[k_i, b_i], self.vc[k_i, b_i]
        kc.index_copy_(2, slot, k[:, :, None].to(kc.dtype))        # FP32 caches, also under autocast
        vc.index_copy_(2, slot, v[:, :, None].to(vc.dtype))
        qm = is_q.reshape(S)[:, None, None]
        kc[:, :, -1] = torch.where(qm, k, kc[:, :, -1])
        vc[:, :, -1] = torch.where(qm, v, vc[:, :, -1])
        att = (q[:, :, None, :] * kc).sum(-1) * (q.shape[-1] ** -0.5) + bias   # [S, h, W+1]
        att = att.softmax(-1)
        o = (att[..., None] * vc).sum(-2).reshape(S, -1)
        x = x + blk.proj(o)
        return x + blk.mlp(x)

    def _bias(self):
        """[B*N, heads, W+1] additive attention bias for the current frame."""
        cfg = self.cfg
        W, t = cfg.window, self.t
        tq = self.tq.reshape(-1, 1)
        sf = self.slot_frame[None, :]                                    # [1, W]
        valid = (sf >= 0) & (sf >= tq)
        cur = sf == t
        valid = valid | (cur & (t < tq))        # inactive tracks attend to their own slot only
        anchor = (t - tq) >= W                                           # [S, 1]
        valid = torch.cat([valid.expand(tq.shape[0], W), anchor], dim=1)
        idx = torch.cat([(t - self.slot_frame).clamp(0, W), self.anchor_slot])
        bias = self.m.tracker.rel_bias[:, idx]                           # [h, W+1]
        return bias[None].expand(tq.shape[0], -1, -1).masked_fill(~valid[:, None, :], float("-inf"))

    @torch.no_grad()
    def step(self, frame):
        """frame [B, 3, H, W] float RGB 0..255 -> (xy [B, N, 2], vis prob [B, N], conf prob [B, N])."""
        return self.step_features(self.m.encoder(frame.float()))

    @torch.no_grad()
    def step_features(self, feats):
        """One frame given its encoder levels (each [B, D, h, w]); returns what `step` returns."""
        cfg, tr = self.cfg, self.m.tracker
        B, N = self.tq.shape
        t = self.t
        is_q = self.tq == t
        tables = [FeatureTable(f) for f in feats]
        if self.sync_free or bool(is_q.any()):   # descriptors of the tracks starting now
            d = self._descriptors_at(tables, self.pq)
            self.desc.copy_(torch.where(is_q[..., None, None, None], d, self.desc))
            if self.recent is not None:
                self.recent.copy_(torch.where(is_q[..., None, None, None], d, self.recent))
        slot = (t % cfg.window).reshape(1)
        self.slot_frame.index_copy_(0, slot, t.reshape(1))
        bias = self._bias()
        p = torch.where(is_q[..., None], self.pq, self.entry())
        h = tr.h0.expand(B * N, cfg.width)
        rec = self.record
        if rec is not None:
            rec.setdefault("feats", []).append([f.clone() for f in feats])
            rec.setdefault("p_init", []).append(p.clone())
        for k_i in range(cfg.iters):
            corr = self.window_corr(tables, p)
            x = tr.token(corr, p, self.pq, is_q).reshape(B * N, -1) + h
            if rec is not None:
                rec.setdefault("corr", []).append(corr.clone())
                rec.setdefault("token", []).append(x.reshape(B, N, -1).clone())
            for b_i, blk in enumerate(tr.blocks):
                x = self._attend(blk, x, k_i, b_i, slot, is_q, bias)
                cross = tr.cross_layer(b_i)
                if cross is not None:
                    x = cross(x.reshape(B, N, -1), self.tq < t).reshape(B * N, -1)
            h = x
            dp, vis, conf = tr.readout(x.reshape(B, N, -1))
            p = torch.where(is_q[..., None], self.pq, p + dp)
            if rec is not None:
                rec.setdefault("hidden", []).append(x.reshape(B, N, -1).clone())
                rec.setdefault("iter_xy", []).append(p.clone())
        active = self.tq <= t
        if self.recent is not None:   # the next frame's recent descriptors: this frame's at its output
            self.recent.copy_(torch.where(active[..., None, None, None], self._descriptors_at(tables, p), self.recent))
        self.p_prev.copy_(torch.where(active[..., None], self.p_last, self.p_prev))
        self.p_last.copy_(torch.where(active[..., None], p, self.p_last))
        vis_p = torch.where(is_q, torch.ones_like(vis), torch.sigmoid(vis))
        conf_p = torch.where(is_q, torch.ones_like(conf), torch.sigmoid(conf))
        self.t.add_(1)
        return p, vis_p, conf_p


@torch.no_grad()
def track_clip(model, video, tq, pq, chunk=None):
    """Streams a whole clip. video [B, T, 3, H, W] (0..255, any float/uint8 dtype, may live on CPU);
    returns xy [B, N, T, 2], vis [B, N, T], conf [B, N, T] (model-input pixels)."""
    dev = pq.device
    st = StreamingTracker(model, tq, pq)
    xs, vs, cs = [], [], []
    for t in range(video.shape[1]):
        xy, v, c = st.step(video[:, t].to(dev).float())
        xs.append(xy)
        vs.append(v)
        cs.append(c)
    return torch.stack(xs, 2), torch.stack(vs, 2), torch.stack(cs, 2)


@torch.no_grad()
def streaming_entries(model, feats, tq, pq):
    """The estimate each frame is entered with when the clip is streamed (StreamingTracker.entry:
    the previous frame's output, extrapolated by cfg.entry_velocity; the query point up to the
    query frame). feats: encoder levels of all frames, each
    [B*T, D, h, w] (frames of a clip consecutive); tq [B, N]; pq [B, N, 2] -> [B, N, T, 2].
    Training enters tracks with these so that it sees the errors streaming makes."""
    B = tq.shape[0]
    T = feats[0].shape[0] // B
    per_clip = [f.reshape(B, T, *f.shape[1:]) for f in feats]
    st = StreamingTracker(model, tq, pq)
    entries = []
    for t in range(T):
        entries.append(st.entry())       # pq until the track's query frame has passed
        st.step_features([f[:, t] for f in per_clip])
    return torch.stack(entries, 2)
