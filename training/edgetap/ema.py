"""An exponential moving average of a network's weights during training (`train.py --ema DECAY`).

After every optimizer step, avg = decay * avg + (1 - decay) * current, for every floating tensor
of the state dict (parameters and BatchNorm statistics; integer buffers are copied). The average
is kept in a second network of the same architecture, so it can be validated as it is, and it is
saved in the checkpoint beside the trained weights (`"ema"`); evaluate.py and export.py use it
with `--ema`. A schedule restart perturbs the trained weights at its peak rate; the average moves
by (1 - decay) of each step, so it starts where the checkpoint was and follows the trajectory's
mean over about 1 / (1 - decay) steps.
"""
import copy

import torch


class WeightAverage:
    def __init__(self, model, decay, state=None):
        """model: the network being trained; state: a saved average (a state dict), used when it
        fits the network, otherwise the average starts at the network's current weights."""
        if not 0.0 < decay < 1.0:
            raise ValueError(f"ema decay {decay}: must be in (0, 1)")
        self.decay = decay
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.resumed = False
        if state is not None and self._fits(state):
            self.model.load_state_dict(state)
            self.resumed = True
        # the averaged tensors (views of the copy's parameters and buffers), found once
        own = self.model.state_dict()
        self._floats = [k for k, v in own.items() if v.is_floating_point()]
        self._counters = [k for k, v in own.items() if not v.is_floating_point()]
        self._avg = [own[k] for k in self._floats]
        self._copied = [own[k] for k in self._counters]

    def _fits(self, state):
        own = self.model.state_dict()
        return own.keys() == state.keys() and all(own[k].shape == state[k].shape for k in own)

    @torch.no_grad()
    def update(self, model):
        cur = model.state_dict()
        torch._foreach_mul_(self._avg, self.decay)
        torch._foreach_add_(self._avg, [cur[k].detach() for k in self._floats], alpha=1.0 - self.decay)
        for v, k in zip(self._copied, self._counters):
            v.copy_(cur[k])

    def state_dict(self):
        """The averaged weights as float32 CPU tensors (the checkpoint's `"ema"`)."""
        return {k: v.detach().float().cpu() for k, v in self.model.state_dict().items()}
