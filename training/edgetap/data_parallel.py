"""Data-parallel training (torchrun, one process per GPU; gloo on the CPU for the tests): the
process group, the schedule's clock shared by every rank, and a check that the ranks' weights
stayed identical.

The rate and the self-initialised tracks follow the schedule's clock, seconds of training steps.
Each rank times its own steps, and they differ: by jitter, and by the mid-chunk validations that
rank 0 runs while the others wait in their next step's gradient all-reduce. Ranks that read their
own clocks would step identical gradients with different rates and drift apart. So every
SYNC_EVERY steps the ranks take rank 0's clock (its steps exclude its validations, as a single
process's do), and the schedule reads that clock until the next sync."""
import os

import torch
import torch.distributed as dist

SYNC_EVERY = 10   # steps between the clock's (and the stop decision's) all-reduce


def start(cpu):
    """Joins the process group torchrun describes; returns (rank, world, device). Without
    torchrun (WORLD_SIZE unset or 1): (0, 1, None), the caller's single device."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return 0, 1, None
    dist.init_process_group("gloo" if cpu else "nccl")
    if cpu:
        return dist.get_rank(), dist.get_world_size(), torch.device("cpu")
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    return dist.get_rank(), dist.get_world_size(), torch.device("cuda", local)


def wrap(model, dev):
    """The model in DistributedDataParallel (gradients all-reduced in backward)."""
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index] if dev.type == "cuda" else None)


def sync(done, seconds, rank, dev):
    """One all-reduce: whether any rank is done, and rank 0's clock. Returns (done, seconds)."""
    v = torch.tensor([1.0 if done else 0.0, seconds if rank == 0 else 0.0], dtype=torch.float64, device=dev)
    dist.all_reduce(v)
    return bool(v[0].item() > 0), float(v[1].item())


def weight_spread(model, dev):
    """The largest difference between ranks in any parameter tensor's sum or sum of squares
    (0.0 when every rank holds the same weights)."""
    stats = torch.stack([s for p in model.parameters() for s in (p.detach().double().sum(),
                                                                  p.detach().double().square().sum())]).to(dev)
    hi, lo = stats.clone(), -stats
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MAX)
    return float((hi + lo).max().item())


def finish():
    dist.barrier()
    dist.destroy_process_group()
