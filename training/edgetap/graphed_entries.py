"""The training step's streaming-entries pass as a CUDA graph per shape (GPU only).

`engine.streaming_entries` steps a StreamingTracker through a clip's frames: about 1,860 small
operator calls per frame (round 6's count: `git show 924c9c4:bench/NOTES.md`), so on a GPU its time is the host's
dispatch, not the device's work. A `sync_free` tracker step never waits on the device and
writes only into the tracker's own buffers (engine.py), so it is captured once per shape
(clips, tracks, level sizes, precision) and replayed once per frame: each replay reads the
frame's features from the graph's input buffers and carries the state in the tracker's. The
weights are read where they live, so the optimizer's in-place updates reach the next replay.
Same results as the eager pass (`tests/test_graphed_entries.py`, skipped without a GPU).
"""
import torch

from . import fused_reads
from .engine import StreamingTracker


class EntriesGraph:
    """One captured tracker step for clips of fixed shapes."""

    def __init__(self, model, tq, pq, level_shapes, dtype):
        self.tracker = StreamingTracker(model, tq, pq, sync_free=True)
        self.frame = [torch.zeros(shape, device=pq.device, dtype=dtype) for shape in level_shapes]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):       # warm-up before capture: library handles, allocator pools
                self.tracker.step_features(self.frame)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        # thread-local: other threads (NCCL's watchdog under torchrun) may use CUDA meanwhile
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
            self.tracker.step_features(self.frame)

    def entries(self, per_clip, tq, pq):
        """per_clip: levels, each [B, T, D, h, w] -> [B, N, T, 2], as engine.streaming_entries."""
        st = self.tracker
        st.restart(tq, pq)
        out = []
        for t in range(per_clip[0].shape[1]):
            out.append(st.entry())
            for buf, level in zip(self.frame, per_clip):
                buf.copy_(level[:, t])
            self.graph.replay()
        return torch.stack(out, 2)


_graphs = {}


@torch.no_grad()
def graphed_streaming_entries(model, feats, tq, pq):
    """engine.streaming_entries on a CUDA device, one graph replay per frame."""
    B = tq.shape[0]
    T = feats[0].shape[0] // B
    per_clip = [f.reshape(B, T, *f.shape[1:]) for f in feats]
    shapes = tuple((B,) + tuple(f.shape[2:]) for f in per_clip)
    autocast = torch.is_autocast_enabled("cuda")
    dtype = torch.get_autocast_dtype("cuda")
    key = (id(model), tuple(tq.shape), shapes, feats[0].dtype, autocast, dtype, fused_reads.enabled())
    if key not in _graphs:
        # the weights' casts are captured as kernels, not taken from autocast's cache (whose
        # copies would be freed when the training step's autocast region ends)
        with torch.autocast("cuda", dtype=dtype, enabled=autocast, cache_enabled=False):
            _graphs[key] = EntriesGraph(model, tq, pq, shapes, feats[0].dtype)
    return _graphs[key].entries(per_clip, tq, pq)
