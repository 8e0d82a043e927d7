"""Builders of ragged test batches and their per-matrix torch.linalg references."""

import torch

from conftest import make_rhs, make_spd, make_tri

# Size lists covering each CUDA kernel family: all <= 32 (registers), up to 64
# (shared memory or blocked), beyond 32-wide panels with odd remainders, and every
# tile-count group of the tile family.
SIZE_SETS = {
    "tiny": [1, 0, 3, 2, 4],
    "small": [5, 17, 1, 32, 8, 0, 31, 12],
    "medium": [33, 7, 64, 1, 40, 0, 65, 20],
    "large": [130, 3, 97, 64, 1],
    # every tile count of the tile family (float64 to 192, float32 to 320) and past it
    "tiles": [193, 40, 100, 33, 161, 2, 64, 129, 96, 321],
}


def layout(sizes, cols=None, gap=0, reverse=False):
    """Offsets of blocks n_i x n_i (or n_i x cols) with `gap` unused elements after
    each block; `reverse` stores the blocks in the opposite order of the sizes."""
    ext = [s * (s if cols is None else cols) for s in sizes]
    order = list(range(len(sizes)))
    if reverse:
        order.reverse()
    offsets = [0] * len(sizes)
    pos = 0
    for i in order:
        offsets[i] = pos
        pos += ext[i] + gap
    return torch.tensor(offsets, dtype=torch.int64), pos


def scatter(blocks, offsets, total, fill, dtype, device):
    values = torch.full((total,), fill, dtype=dtype, device=device)
    for b, o in zip(blocks, offsets.tolist()):
        values[o : o + b.numel()] = b.reshape(-1).to(device)
    return values


def blocks_of(values, sizes, offsets, cols=None, rows_first=True):
    out = []
    for s, o in zip(sizes, offsets.tolist()):
        c = s if cols is None else cols
        shape = (s, c) if rows_first else (c, s)
        out.append(values[o : o + s * c].view(shape))
    return out


def set_dominant_diagonal(values, n, offsets):
    """Sets the diagonal of every block n_i x n_i at offsets[i] of values to n_i + 1, in
    place (sizes >= 0): with the other entries in [-1, 1] each block, either triangle read
    as symmetric, is then positive definite. Returns values."""
    dev = values.device
    n, offsets = n.to(dev), offsets.to(dev)
    owner = torch.repeat_interleave(torch.arange(len(n), device=dev), n)
    first = torch.repeat_interleave(offsets - (torch.cumsum(n, 0) - n) * (n + 1), n)
    j = torch.arange(int(n.sum()), device=dev)
    values[first + j * (n + 1)[owner]] = (n + 1)[owner].to(values.dtype)
    return values


def check_outside_is_zero(out, sizes, offsets, cols=None):
    """Every element of out outside the blocks (n_i x n_i, or n_i x cols, at offsets) is
    zero. The blocks must not overlap: +1 where one starts, -1 where it ends."""
    sizes = torch.as_tensor(list(sizes), dtype=torch.int64)
    offsets = torch.as_tensor(offsets, dtype=torch.int64).cpu()
    ext = sizes * (sizes if cols is None else cols)
    edge = torch.zeros(out.numel() + 1, dtype=torch.int64)
    edge.index_add_(0, offsets, torch.ones_like(offsets))
    edge.index_add_(0, offsets + ext, -torch.ones_like(offsets))
    outside = edge.cumsum(0)[:-1].eq(0).to(out.device)
    assert (out[outside] == 0).all(), "elements outside the blocks must be zero"


class RaggedCase:
    """A ragged batch of SPD matrices (and triangular ones) with gaps holding NaN,
    so that any read outside the blocks shows up in the results."""

    def __init__(self, sizes, dtype, device, gap=3, reverse=True, cond=10.0, seed=0):
        torch.manual_seed(seed)
        self.sizes = list(sizes)
        self.dtype, self.device = dtype, device
        self.n = torch.tensor(self.sizes, dtype=torch.int64)
        self.spd = [make_spd((), s, dtype, "cpu", cond=cond) for s in self.sizes]
        self.offsets, total = layout(self.sizes, gap=gap, reverse=reverse)
        self.A = scatter(self.spd, self.offsets, total, float("nan"), dtype, device)
        self.total = total

    def tri(self, upper, unit=False):
        mats = [make_tri((), s, self.dtype, "cpu", upper=upper, unit=unit) for s in self.sizes]
        return mats, scatter(mats, self.offsets, self.total, float("nan"), self.dtype, self.device)

    def rhs(self, k, left=True, gap=2):
        blocks = []
        for s in self.sizes:
            c = s if k < 0 else k
            blocks.append(make_rhs((s, c) if left else (c, s), self.dtype))
        offs, pos = [], 0
        for b in blocks:
            offs.append(pos)
            pos += b.numel() + gap
        offsets = torch.tensor(offs, dtype=torch.int64)
        values = scatter(blocks, offsets, pos, float("nan"), self.dtype, self.device)
        return blocks, values, offsets

    def meta(self, on_device):
        dev = self.device if on_device else "cpu"
        return self.n.to(dev), self.offsets.to(dev)
