"""Window correlation as one Triton kernel per direction (GPU only; opt-in, `enable()`).

`sampling.window_correlation` gathers each window's (2r+2)^2 patch of feature rows into a tensor,
dots it with the track's descriptors and blends the dots: in a training step the gathered
patches are the largest tensors (12.6 M rows of 64 floats per level and iteration, 3.2 GB),
written once, read back, and their gradient written and scattered again (round 9's profile: `git show 924c9c4:bench/NOTES.md`). Here one program per window reads its patch straight from the rows into registers and
writes only the P*(2r+1)^2 blended dots; the backward recomputes the patch and adds the
gradients into the rows and the descriptors atomically. Nothing of patch size reaches memory.

Same function as the PyTorch path, which stays the reference (`tests/test_fused_reads.py`,
values and gradients, skipped without a GPU). Arithmetic in float32 (IEEE dots), whatever the
rows' precision. The window centres carry no gradient here (training reads windows around
detached estimates); `usable` says when the kernel applies.
"""
import torch

try:
    import triton
    import triton.language as tl
except ImportError:      # the CPU machines: the PyTorch path is used
    triton = None

_enabled = False


def enable(on=True):
    """Use the kernels wherever `usable` holds (train.py / bench_step.py --fused-reads)."""
    global _enabled
    if on and triton is None:
        raise RuntimeError("--fused-reads needs Triton, which this Python does not have")
    _enabled = on


def enabled():
    return _enabled


def usable(rows, xy, desc):
    dim = rows.shape[-1]
    return (_enabled and rows.is_cuda and not xy.requires_grad and dim >= 16
            and dim & (dim - 1) == 0 and desc.shape[-2] <= 64)


def _pow2(n, least=16):
    return max(least, 1 << (n - 1).bit_length())


if triton is not None:
    @triton.jit
    def _setup(rows_ptr, frame_ptr, corner_ptr, frac_ptr, desc_ptr, didx_ptr, i, H, W, P,
               D: tl.constexpr, K: tl.constexpr, KP: tl.constexpr, PP: tl.constexpr,
               WP: tl.constexpr):
        """Window i: its patch [KP, D], descriptors [PP, D], blend matrix [WP, KP], the patch's
        row offsets and in-map mask, and the descriptors' offsets (all float32)."""
        f = tl.load(frame_ptr + i).to(tl.int64)
        cx = tl.load(corner_ptr + 2 * i)
        cy = tl.load(corner_ptr + 2 * i + 1)
        fx = tl.load(frac_ptr + 2 * i)
        fy = tl.load(frac_ptr + 2 * i + 1)
        di = tl.load(didx_ptr + i).to(tl.int64)
        d = tl.arange(0, D)
        q = tl.arange(0, KP)                       # patch pixel, row-major over (K+1)^2
        qy = q // (K + 1)
        qx = q % (K + 1)
        ys = cy + qy
        xs = cx + qx
        inside = (q < (K + 1) * (K + 1)) & (ys >= 0) & (ys < H) & (xs >= 0) & (xs < W)
        row_off = ((f * H + ys) * W + xs)[:, None] * D + d[None, :]
        patch = tl.load(rows_ptr + row_off, mask=inside[:, None], other=0.0).to(tl.float32)
        p = tl.arange(0, PP)
        desc_off = (di * P + p)[:, None] * D + d[None, :]
        desc = tl.load(desc_ptr + desc_off, mask=(p < P)[:, None], other=0.0).to(tl.float32)
        w = tl.arange(0, WP)                       # window point, row-major over K^2
        wy = (w // K)[:, None]
        wx = (w % K)[:, None]
        by = tl.where(qy[None, :] == wy, 1.0 - fy, tl.where(qy[None, :] == wy + 1, fy, 0.0))
        bx = tl.where(qx[None, :] == wx, 1.0 - fx, tl.where(qx[None, :] == wx + 1, fx, 0.0))
        blend = tl.where((w < K * K)[:, None], by * bx, 0.0)
        return patch, desc, blend, row_off, inside, desc_off, p, w

    @triton.jit
    def _forward(rows_ptr, frame_ptr, corner_ptr, frac_ptr, desc_ptr, didx_ptr, out_ptr,
                 H, W, P, scale, D: tl.constexpr, K: tl.constexpr, KP: tl.constexpr,
                 PP: tl.constexpr, WP: tl.constexpr):
        i = tl.program_id(0).to(tl.int64)
        patch, desc, blend, _, _, _, p, w = _setup(rows_ptr, frame_ptr, corner_ptr, frac_ptr, desc_ptr,
                                                   didx_ptr, i, H, W, P, D, K, KP, PP, WP)
        dots = tl.dot(patch, tl.trans(desc), input_precision="ieee")              # [KP, PP]
        c = tl.dot(blend, dots, input_precision="ieee") * scale                   # [WP, PP]
        out = out_ptr + i * P * K * K + p[None, :] * (K * K) + w[:, None]
        tl.store(out, c, mask=(w < K * K)[:, None] & (p < P)[None, :])

    @triton.jit
    def _backward(rows_ptr, frame_ptr, corner_ptr, frac_ptr, desc_ptr, didx_ptr, grad_out_ptr,
                  grad_rows_ptr, grad_desc_ptr, H, W, P, scale, D: tl.constexpr, K: tl.constexpr,
                  KP: tl.constexpr, PP: tl.constexpr, WP: tl.constexpr,
                  ROWS: tl.constexpr, DESC: tl.constexpr):
        i = tl.program_id(0).to(tl.int64)
        patch, desc, blend, row_off, inside, desc_off, p, w = _setup(
            rows_ptr, frame_ptr, corner_ptr, frac_ptr, desc_ptr, didx_ptr, i, H, W, P, D, K, KP, PP, WP)
        g = tl.load(grad_out_ptr + i * P * K * K + p[None, :] * (K * K) + w[:, None],
                    mask=(w < K * K)[:, None] & (p < P)[None, :], other=0.0)       # [WP, PP]
        g_dots = tl.dot(tl.trans(blend), g, input_precision="ieee") * scale       # [KP, PP]
        if ROWS:
            g_patch = tl.dot(g_dots, desc, input_precision="ieee")                 # [KP, D]
            tl.atomic_add(grad_rows_ptr + row_off, g_patch, mask=inside[:, None])
        if DESC:
            g_desc = tl.dot(tl.trans(g_dots), patch, input_precision="ieee")       # [PP, D]
            tl.atomic_add(grad_desc_ptr + desc_off, g_desc, mask=(p < P)[:, None])


def _launch_shape(dim, radius, n_desc):
    k = 2 * radius + 1
    return dict(D=dim, K=k, KP=_pow2((k + 1) ** 2), PP=_pow2(n_desc), WP=_pow2(k * k))


class _WindowCorrelation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rows, desc, frame, corner, frac, didx, h, w, radius):
        M, P = frame.shape[0], desc.shape[1]
        shape = _launch_shape(rows.shape[1], radius, P)
        k = shape["K"]
        out = torch.empty(M, P, k * k, device=rows.device, dtype=torch.float32)
        if M:
            _forward[(M,)](rows, frame, corner, frac, desc, didx, out, h, w, P,
                           rows.shape[1] ** -0.5, **shape)
        ctx.save_for_backward(rows, desc, frame, corner, frac, didx)
        ctx.geometry = (h, w, shape)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        rows, desc, frame, corner, frac, didx = ctx.saved_tensors
        h, w, shape = ctx.geometry
        need_rows, need_desc = ctx.needs_input_grad[:2]
        grad_rows = torch.zeros(rows.shape, device=rows.device, dtype=torch.float32) if need_rows else None
        grad_desc = torch.zeros(desc.shape, device=desc.device, dtype=torch.float32) if need_desc else None
        M = frame.shape[0]
        if M and (need_rows or need_desc):
            dummy = torch.empty(1, device=rows.device, dtype=torch.float32)
            _backward[(M,)](rows, frame, corner, frac, desc, didx, grad_out.contiguous(),
                            grad_rows if need_rows else dummy, grad_desc if need_desc else dummy,
                            h, w, desc.shape[1], rows.shape[1] ** -0.5, ROWS=need_rows,
                            DESC=need_desc, **shape)
        return (grad_rows.to(rows.dtype) if need_rows else None,
                grad_desc.to(desc.dtype) if need_desc else None, None, None, None, None, None, None, None)


def window_correlation(table, frame, corner, frac, desc, radius):
    """sampling.window_correlation's result in the kernels above, given its windows' patch
    corners [..., 2] (long) and centre fractions [..., 2] (float32)."""
    lead = corner.shape[:-1]
    P, D = desc.shape[-2:]
    desc_rows = desc.reshape(-1, P, D)
    didx = torch.arange(desc_rows.shape[0], device=corner.device).reshape(desc.shape[:-2]).expand(lead)
    out = _WindowCorrelation.apply(table.rows, desc_rows.contiguous(), frame.expand(lead).reshape(-1).contiguous(),
                                   corner.to(torch.int32).reshape(-1, 2).contiguous(), frac.reshape(-1, 2).contiguous(),
                                   didx.reshape(-1).contiguous(), table.h, table.w, radius)
    return out.reshape(*lead, -1)
