"""2-D geometry for the clip synthesizer: homographies (solved in float64), rotations and
2x2 matrix helpers that broadcast over whole frames of pixels."""
import torch


def homography_from_corners(src, dst):
    """src, dst [..., 4, 2] -> H [..., 3, 3] with dst ~ H src (DLT, float64)."""
    src = src.double()
    dst = dst.double()
    x, y = src[..., 0], src[..., 1]
    u, v = dst[..., 0], dst[..., 1]
    z, o = torch.zeros_like(x), torch.ones_like(x)
    r1 = torch.stack([x, y, o, z, z, z, -x * u, -y * u], -1)
    r2 = torch.stack([z, z, z, x, y, o, -x * v, -y * v], -1)
    A = torch.cat([r1, r2], -2)
    b = torch.cat([u, v], -1)
    h = torch.linalg.solve(A, b[..., None])[..., 0]
    return torch.cat([h, torch.ones_like(h[..., :1])], -1).reshape(h.shape[:-1] + (3, 3))


def apply_h(H, p):
    """H [..., 3, 3], p [..., P, 2] -> [..., P, 2]."""
    ph = torch.cat([p, torch.ones_like(p[..., :1])], -1)
    q = ph @ H.transpose(-1, -2)
    return q[..., :2] / q[..., 2:3]


def rot(theta):
    c, s = torch.cos(theta), torch.sin(theta)
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


def matvec2(A, v):
    """A [..., 2, 2] times v [..., 2] -> [..., 2], broadcasting A over v's leading dims (per pixel
    on a whole frame). Written out: a matmul would expand A to every pixel and run a batched
    product of 2x2 matrices."""
    return torch.stack([A[..., 0, 0] * v[..., 0] + A[..., 0, 1] * v[..., 1],
                        A[..., 1, 0] * v[..., 0] + A[..., 1, 1] * v[..., 1]], -1)


def dot2(a, b):
    """a, b [..., 2] -> [...] (broadcasting)."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]


def inv2x2(A):
    """Closed-form inverse of [..., 2, 2] matrices."""
    a, b, c, d = A[..., 0, 0], A[..., 0, 1], A[..., 1, 0], A[..., 1, 1]
    det = a * d - b * c
    return torch.stack([torch.stack([d, -b], -1), torch.stack([-c, a], -1)], -2) / det[..., None, None]


def pixel_grid(W, H, device):
    """Pixel centres (x, y) of an H x W image, row by row -> [H * W, 2]."""
    ys, xs = torch.meshgrid(torch.arange(H, device=device, dtype=torch.float32),
                            torch.arange(W, device=device, dtype=torch.float32), indexing="ij")
    return torch.stack([xs, ys], -1).reshape(H * W, 2)
