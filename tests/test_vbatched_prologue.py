"""The fused prologue of potrf_vbatched / posv_vbatched on CUDA (metadata on the device,
max_n given: the checks, the zeros of L outside its blocks and the grouping by size in two
or three kernels) against the separate steps it replaces (BATCHCHOL_RAGGED_PROLOGUE=0):
the same info, L and X bit for bit, over valid and invalid layouts (the matrices' and
the right-hand sides') and every kernel family, and L zero outside the valid blocks.
Where every matrix goes to the warp family in one launch (max_n 17..32, up to 8,192
float32 or 2,048 float64 matrices), potrf runs the prologue and the factorization in one
cooperative launch; those cases are held to the prologue's own two kernels too
(BATCHCHOL_RAGGED_ONE=0)."""

import pytest
import torch

from conftest import cuda_kernel_names, ops
from vbatched_util import check_outside_is_zero, set_dominant_diagonal

pytestmark = pytest.mark.cuda

SIZES = {
    "small": [5, 17, 1, 32, 8, 0, 31, 12, 3],      # the warp family, one-pass grouping
    "medium": [33, 7, 64, 1, 40, 0, 65, 20, 128],  # warp64, tile groups: two passes
    "large": [130, 3, 97, 64, 1, 300, 33],         # binned (past the tile family in float64)
}
LAYOUTS = ["packed", "gaps", "long-gap", "reversed", "invalid", "clash", "next-past-end",
           "rhs-clash", "rhs-outside"]


def build(sizes, layout, dtype, seed=0):
    """values (on the GPU; NaN outside the blocks), sizes and offsets (CPU, int64), numel
    and max_n for one layout. Each block is diagonally dominant in both triangles."""
    g = torch.Generator().manual_seed(seed)
    n = torch.tensor(sizes, dtype=torch.int64)
    ext = n * n
    gap = {"gaps": 3, "long-gap": 1500}.get(layout, 0)
    lead = 2 * gap + (2000 if layout == "long-gap" else 0)
    order = torch.arange(len(sizes))
    if layout == "reversed":
        order = order.flip(0)
    off = torch.zeros_like(n)
    pos = lead
    for i in order.tolist():
        off[i] = pos
        pos += int(ext[i]) + gap
    numel = pos
    values = torch.full((numel,), float("nan"), dtype=dtype)
    for s, o in zip(sizes, off.tolist()):
        blk = torch.rand(s, s, generator=g, dtype=torch.float64) * 2 - 1
        values[o : o + s * s] = (blk + torch.eye(s, dtype=torch.float64) * (s + 1)).reshape(-1).to(dtype)
    max_n = max(sizes)
    n, off = n.clone(), off.clone()
    if layout == "invalid":
        n[1] = -2                            # negative size
        n[2] = max_n + 1                     # above max_n
        off[3] = numel                       # starts at the end: runs past it
    elif layout == "clash":
        big = int(torch.argmax(n))
        off[(big + 1) % len(sizes)] = off[big] + 1  # starts inside the largest block
    elif layout == "next-past-end":
        # The block that ends the buffer is followed by an invalid one whose offset lies
        # just past the end: its gap must not be zeroed (it is outside the buffer).
        last = int(torch.argmax(off))
        values = values[: int(off[last] + ext[last])].clone()
        numel = values.numel()
        n = torch.cat([n, torch.tensor([2])])
        off = torch.cat([off, torch.tensor([numel + 5])])
    return values.cuda(), n, off, numel, max_n


def rhs_offsets(n, layout):
    """Packed right-hand-side offsets (one column), or with one block invalid while its
    matrix is valid: overlapping the block before it, or past the end of B."""
    b_off = torch.cat([torch.zeros(1, dtype=torch.int64), n.clamp_min(0).cumsum(0)[:-1]])
    live = (n > 0).nonzero().view(-1).tolist()
    if layout == "rhs-clash":
        b_off[live[1]] = b_off[live[0]]  # both non-empty, the same start: the second is -6
    elif layout == "rhs-outside":
        b_off[live[1]] = int(n.clamp_min(0).sum()) + 4  # -5
    return b_off


def dirty_allocator(like):
    """Leaves a freed block of like's size full of NaN in the caching allocator, so that an
    output allocated next most likely starts as NaN rather than as zeros."""
    junk = torch.full_like(like, float("nan"))
    del junk


def calls(values, n, off, max_n, idx_dtype, layout="packed"):
    """potrf (both triangles) and posv (one right-hand side, the same B for every call),
    each on an allocator that last held NaN."""
    n_d, off_d = n.to(idx_dtype).cuda(), off.cuda()
    cnt = len(n)
    g = torch.Generator().manual_seed(cnt)
    B = torch.rand(int(n.clamp_min(0).sum()) + 4, generator=g, dtype=torch.float64)
    B = B.to(values.dtype).cuda()
    b_off = rhs_offsets(n, layout).cuda()
    dirty_allocator(values)
    L, info = ops.potrf_vbatched(values, n_d, off_d, max_n, False)
    dirty_allocator(values)
    U, info_u = ops.potrf_vbatched(values, n_d, off_d, max_n, True)
    dirty_allocator(values)
    X, L2, info2 = ops.posv_vbatched(values, n_d, off_d, B, b_off, 1, max_n, False)
    assert info.shape == (cnt,)
    for M, i in ((L, info), (U, info_u), (L2, info2)):
        assert_zero_outside_valid(M, n, off, i)
    return L, info, U, info_u, X, L2, info2


def assert_same(a, b, what):
    for x, y in zip(a, b):
        torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True, msg=what)


def assert_zero_outside_valid(L, n, off, info):
    valid = (info.cpu() >= 0) & (n > 0)  # valid blocks do not overlap
    check_outside_is_zero(L, n[valid].tolist(), off[valid])


@pytest.mark.parametrize("sizes", list(SIZES))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_prologue_matches_separate_steps(monkeypatch, sizes, layout, dtype):
    values, n, off, numel, max_n = build(SIZES[sizes], layout, dtype)
    for idx_dtype in (torch.int64, torch.int32):
        got = {}
        for arm in ("1", "0"):
            monkeypatch.setenv("BATCHCHOL_RAGGED_PROLOGUE", arm)
            got[arm] = calls(values, n, off, max_n, idx_dtype, layout)
        assert_same(got["1"], got["0"], f"{sizes} {layout} {idx_dtype}")
        info, info2 = got["1"][1], got["1"][6]
        second = int((n > 0).nonzero()[1])
        if layout.startswith("rhs-"):
            assert (info == 0).all()
            code = -6 if layout == "rhs-clash" else -5
            assert info2.tolist() == [code if i == second else 0 for i in range(len(n))]
        elif layout == "invalid":
            assert info.tolist()[1:4] == [-1, -2, -3]
        elif layout == "clash":
            assert (info == -4).sum() == 1
        elif layout == "next-past-end":
            assert info.tolist()[-1] == -3
        else:
            assert (info == 0).all()


@pytest.mark.parametrize("family", ["warp", "registers", "shared", "greedy", "lazy", "binned",
                                    "tile", "tile-one"])
@pytest.mark.parametrize("layout", ["gaps", "invalid", "clash", "rhs-clash"])
def test_prologue_every_family(monkeypatch, family, layout):
    # Each family takes its own grouping (or none: registers, shared, greedy, lazy).
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    sizes = SIZES["small"] if family in ("warp", "registers") else SIZES["medium"]
    values, n, off, numel, max_n = build(sizes, layout, torch.float64, seed=1)
    got = {}
    for arm in ("1", "0"):
        monkeypatch.setenv("BATCHCHOL_RAGGED_PROLOGUE", arm)
        got[arm] = calls(values, n, off, max_n, torch.int64, layout)
    assert_same(got["1"], got["0"], f"{family} {layout}")


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_prologue_complex(monkeypatch, dtype):
    # Complex batches take no grouping; L's elements are two or four 32-bit words.
    values, n, off, numel, max_n = build(SIZES["medium"], "gaps", torch.float64)
    values = values.to(dtype)
    got = {}
    for arm in ("1", "0"):
        monkeypatch.setenv("BATCHCHOL_RAGGED_PROLOGUE", arm)
        got[arm] = calls(values, n, off, max_n, torch.int64)
    assert_same(got["1"], got["0"], str(dtype))


@pytest.mark.parametrize("count", [3000, 20000])
@pytest.mark.parametrize("max_n", [32, 72])
def test_prologue_many_thread_blocks(monkeypatch, count, max_n):
    # Several thread blocks of the prologue's kernels (a flag word each), an invalid block
    # in one of the last ones, the warp family's three launches past 16,384 matrices.
    g = torch.Generator().manual_seed(count + max_n)
    n = torch.randint(0, max_n + 1, (count,), generator=g)
    ext = n * n
    off = torch.cat([torch.zeros(1, dtype=torch.int64), ext.cumsum(0)[:-1]])
    numel = int(ext.sum())
    values = torch.rand(numel, dtype=torch.float32, device="cuda") * 2 - 1
    set_dominant_diagonal(values, n, off)
    bad = n.clone()
    bad[count - 7] = -1
    for sizes, layout_ok in ((n, True), (bad, False)):
        got = {}
        for arm in ("1", "0"):
            monkeypatch.setenv("BATCHCHOL_RAGGED_PROLOGUE", arm)
            got[arm] = calls(values, sizes, off, max_n, torch.int64)
        assert_same(got["1"], got["0"], f"{count} {max_n} {layout_ok}")
        info = got["1"][1]
        assert (info == 0).all() if layout_ok else info.tolist()[count - 7] == -1


@pytest.mark.parametrize("arm", ["1", "0"])
def test_prologue_switch_picks_the_kernels(monkeypatch, arm):
    # The switch must change what runs, or the comparisons above compare a path with itself.
    monkeypatch.setenv("BATCHCHOL_RAGGED_PROLOGUE", arm)
    values, n, off, numel, max_n = build(SIZES["medium"], "gaps", torch.float64)
    n_d, off_d = n.cuda(), off.cuda()
    names = " ".join(cuda_kernel_names(lambda: ops.potrf_vbatched(values, n_d, off_d, max_n, False)))
    assert ("prologue_check_kernel" in names) == (arm == "1")
    assert ("block_status_kernel" in names) == (arm == "0")
    # Host metadata, or no max_n, keep the separate steps.
    monkeypatch.setenv("BATCHCHOL_RAGGED_PROLOGUE", "1")
    for args in ((n, off, max_n), (n_d, off_d, None)):
        names = " ".join(cuda_kernel_names(lambda: ops.potrf_vbatched(values, *args, False)))
        assert "prologue_check_kernel" not in names


def one_launch_arms(monkeypatch, values, n, off, max_n, idx_dtype, layout="packed"):
    """calls() with the one-launch potrf (default) and with the prologue's two kernels."""
    got = {}
    for arm in ("1", "0"):
        monkeypatch.setenv("BATCHCHOL_RAGGED_ONE", arm)
        got[arm] = calls(values, n, off, max_n, idx_dtype, layout)
    return got


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_one_launch_matches_prologue_kernels(monkeypatch, layout, dtype):
    values, n, off, numel, max_n = build(SIZES["small"], layout, dtype)
    for idx_dtype in (torch.int64, torch.int32):
        got = one_launch_arms(monkeypatch, values, n, off, max_n, idx_dtype, layout)
        assert_same(got["1"], got["0"], f"{layout} {idx_dtype}")


ONE_LAUNCH_MAX = {torch.float32: 8192, torch.float64: 2048}


@pytest.mark.parametrize("count", ["few", "most"])
@pytest.mark.parametrize("max_n", [17, 32])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("layout", ["packed", "reversed", "clash"])
def test_one_launch_many_blocks(monkeypatch, count, max_n, dtype, layout):
    # Up to 32 thread blocks in the prologue's phases (the most matrices the one launch
    # takes), sizes 0..max_n, an invalid size in the last thread block and an indefinite
    # matrix; blocks out of offset order, or two overlapping blocks in different thread
    # blocks (the pairwise pass across them); the same bits as the prologue's two kernels
    # and info as expected.
    count = 257 if count == "few" else ONE_LAUNCH_MAX[dtype]
    g = torch.Generator().manual_seed(count + max_n)
    n = torch.randint(0, max_n + 1, (count,), generator=g)
    n[0] = max_n
    ext = n * n
    off = torch.cat([torch.zeros(1, dtype=torch.int64), ext.cumsum(0)[:-1]])
    numel = int(ext.sum())
    values = set_dominant_diagonal(torch.rand(numel, generator=g, dtype=torch.float64) * 2 - 1,
                                   n, off)
    values[int(off[0])] = -1.0  # matrix 0 is not positive definite at its first pivot
    values = values.to(dtype).cuda()
    n[count - 3] = -1
    expect = torch.zeros(count, dtype=torch.int32)
    expect[0], expect[count - 3] = 1, -1
    if layout == "reversed":
        n, off, expect = n.flip(0), off.flip(0), expect.flip(0)
    elif layout == "clash":
        # The last matrix of order 1..max_n - 1 starts inside matrix 0 (order max_n) and
        # ends inside it too: the later start is -4, nothing else.
        late = int(((n > 0) & (n < max_n)).nonzero()[-1])
        off[late] = off[0] + 1
        expect[late] = -4
    got = one_launch_arms(monkeypatch, values, n, off, max_n, torch.int64)
    assert_same(got["1"], got["0"], f"{count} {max_n} {layout}")
    assert torch.equal(got["1"][1].cpu(), expect)


@pytest.mark.parametrize("case", ["default", "float64", "switch-off", "max_n-16", "too-many",
                                  "float64-too-many", "complex", "registers", "host-metadata"])
def test_one_launch_picks_the_kernels(monkeypatch, case):
    # Which calls take the one launch: the comparisons above must not compare a path with
    # itself, and the calls it does not serve must keep their kernels.
    dtype = {"complex": torch.complex64, "float64": torch.float64,
             "float64-too-many": torch.float64}.get(case, torch.float32)
    count = ONE_LAUNCH_MAX.get(dtype, 0) + 1 if case.endswith("too-many") else 300
    max_n = 16 if case == "max_n-16" else 32
    n = torch.arange(count) % (max_n + 1)
    off = torch.cat([torch.zeros(1, dtype=torch.int64), (n * n).cumsum(0)[:-1]])
    values = torch.zeros(int((n * n).sum()), dtype=dtype, device="cuda")
    if case == "switch-off":
        monkeypatch.setenv("BATCHCHOL_RAGGED_ONE", "0")
    if case == "registers":
        monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", "registers")
    meta = (n, off) if case == "host-metadata" else (n.cuda(), off.cuda())
    names = " ".join(cuda_kernel_names(lambda: ops.potrf_vbatched(values, *meta, max_n, False)))
    assert ("warp_potrf_one_kernel" in names) == (case in ("default", "float64")), names

