"""Random draws of the clip synthesizer's parameters, all from CPU torch generators (deterministic
per seed)."""
import math

import torch

# the side streams of the generator's options (side_stream's salt), one each so that no two draw
# the same numbers
PALE_SALT, FOLLOW_SALT, RELIGHT_SALT = 1, 2, 3


def uniform(gen, *shape, lo=0.0, hi=1.0):
    return lo + (hi - lo) * torch.rand(*shape, generator=gen)


def normal(gen, *shape, std=1.0):
    return std * torch.randn(*shape, generator=gen)


def rand_dir(gen, *shape):
    """Unit vectors [*shape, 2] of uniformly random direction."""
    a = uniform(gen, *shape, hi=2 * math.pi)
    return torch.stack([torch.cos(a), torch.sin(a)], -1)


def side_stream(gen, salt):
    """A generator for one option's draws that leaves gen where it was (a clip drawn with the
    option is the same clip as without it, and so are the clips after it): seeded from what gen
    would draw next, xor salt, so that two options do not draw the same numbers."""
    peek = torch.Generator().set_state(gen.get_state())
    return torch.Generator().manual_seed(int(torch.randint(0, 2 ** 62, (1,), generator=peek)) ^ salt)
