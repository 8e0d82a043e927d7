"""The *_vbatched ops on ragged batches against per-matrix torch.linalg: every
kernel family, upper/lower, gaps and out-of-order blocks, host and device metadata."""

import functools

import pytest
import torch

from conftest import (
    DEVICE_PARAMS,
    DTYPES,
    assert_backward_error,
    assert_close_rel,
    assert_solve_residual,
    break_minor,
    cond2,
    cuda_kernel_names,
    make_spd,
    ops,
    tol,
    to_ref,
)
from vbatched_util import (SIZE_SETS, RaggedCase, blocks_of, check_outside_is_zero,
                           set_dominant_diagonal)

CUDA_FAMILIES = ["warp", "registers", "shared", "greedy", "lazy", "binned", "tile", "tile-one"]


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes", list(SIZE_SETS), ids=list(SIZE_SETS))
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched(device, dtype, sizes, upper):
    c = RaggedCase(SIZE_SETS[sizes], dtype, device)
    L, info = ops.potrf_vbatched(c.A, c.n, c.offsets, None, upper)
    assert L.shape == c.A.shape and info.dtype == torch.int32 and info.device == c.A.device
    assert info.tolist() == [0] * len(c.sizes)
    check_outside_is_zero(L, c.sizes, c.offsets)
    for A, Li in zip(c.spd, blocks_of(L, c.sizes, c.offsets)):
        assert_backward_error(A, Li, upper)
        ref = torch.linalg.cholesky(to_ref(A), upper=upper)
        assert_close_rel(Li, ref, tol(dtype, A.shape[-1], cond2(A) ** 0.5), "factor")


@pytest.mark.cuda
@pytest.mark.parametrize("family", CUDA_FAMILIES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
@pytest.mark.parametrize("sizes", list(SIZE_SETS), ids=list(SIZE_SETS))
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_families(monkeypatch, family, dtype, sizes, upper):
    # A family that does not apply to the batch falls back to the default choice.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    c = RaggedCase(SIZE_SETS[sizes], dtype, "cuda")
    L, info = ops.potrf_vbatched(c.A, c.n, c.offsets, None, upper)
    assert info.tolist() == [0] * len(c.sizes)
    check_outside_is_zero(L, c.sizes, c.offsets)
    for A, Li in zip(c.spd, blocks_of(L, c.sizes, c.offsets)):
        assert_backward_error(A, Li, upper)


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["lazy", "binned", "greedy"])
@pytest.mark.parametrize("left", ["0", "1"])
@pytest.mark.parametrize("group", ["1", "3"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_potrf_vbatched_cuda_blocked_groups(monkeypatch, family, left, group, dtype):
    # The blocked launches' update groups are aligned to launch steps, not to each
    # matrix's first panel (the lazy layouts start small matrices late): with groups of
    # 3 every matrix here starts inside a group somewhere, and in left mode its first
    # group's later panels read A.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    monkeypatch.setenv("BATCHCHOL_BLOCKED_GROUP", group)
    monkeypatch.setenv("BATCHCHOL_BLOCKED_LEFT", left)
    c = RaggedCase([300, 1, 65, 257, 33, 130, 96, 0, 200], dtype, "cuda")
    for upper in (False, True):
        L, info = ops.potrf_vbatched(c.A, c.n, c.offsets, None, upper)
        assert info.tolist() == [0] * len(c.sizes)
        check_outside_is_zero(L, c.sizes, c.offsets)
        for A, Li in zip(c.spd, blocks_of(L, c.sizes, c.offsets)):
            assert_backward_error(A, Li, upper)


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["lazy", "binned", "greedy"])
@pytest.mark.parametrize("left", ["0", "1"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_potrf_vbatched_cuda_blocked_writes_every_entry(monkeypatch, family, left, dtype):
    # Lower factors of the blocked launches have no init pass: each entry's first touch
    # reads A, and info starts at each matrix's first step. The output gets the memory
    # of a tensor that held NaN (more than 1 MB: the caching allocator's large pool), so
    # an entry left unwritten shows up; with max_n given the metadata stays on the GPU.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    monkeypatch.setenv("BATCHCHOL_BLOCKED_LEFT", left)
    c = RaggedCase([512, 1, 65, 257, 33, 130, 96, 0, 200], dtype, "cuda")
    for max_n in (None, 512):
        n, off = (c.n, c.offsets) if max_n is None else (c.n.cuda(), c.offsets.cuda())
        junk = torch.full_like(c.A, float("nan"))
        where = junk.data_ptr()
        del junk
        L, info = ops.potrf_vbatched(c.A, n, off, max_n, False)
        assert L.data_ptr() == where  # else this tests nothing
        assert info.tolist() == [0] * len(c.sizes)
        check_outside_is_zero(L, c.sizes, c.offsets)
        for A, Li in zip(c.spd, blocks_of(L, c.sizes, c.offsets)):
            assert_backward_error(A, Li, False)


@functools.lru_cache(maxsize=2)
def _many_sizes_case(dtype):
    """1,500 matrices of sizes 1..229 on the GPU, grouped by size, with a negative
    diagonal entry at a chosen minor in one matrix of most sizes above 1."""
    g = torch.Generator().manual_seed(1)
    sizes = torch.randint(1, 230, (1500,), generator=g)
    offsets = torch.cumsum(sizes * sizes, 0) - sizes * sizes
    values = torch.empty(int((sizes * sizes).sum()), dtype=dtype, device="cuda")
    groups, expect = [], [0] * len(sizes)
    for s in sizes.unique().tolist():
        idx = (sizes == s).nonzero().view(-1)
        A = make_spd((len(idx),), s, dtype, "cpu", cond=100.0)
        if s > 1 and len(idx) > 1:
            # first, tile edges, inside, last
            minors = [m for m in (1, 32, 33, s // 2 + 1, s) if m <= s]
            m = minors[s % len(minors)]
            A[0, m - 1, m - 1] = -1.0
            expect[int(idx[0])] = m
        where = (offsets[idx][:, None] + torch.arange(s * s)[None, :]).view(-1).cuda()
        values[where] = A.reshape(-1).to("cuda")
        groups.append((idx, where, A))
    return sizes, offsets, values, groups, expect


def _check_many_sizes(L, info, groups, expect, upper):
    """The info and factors of a _many_sizes_case batch (failed matrices: info only)."""
    assert info.tolist() == expect
    for idx, where, A in groups:
        ok = torch.tensor([expect[i] == 0 for i in idx.tolist()])
        Li = L[where].view(A.shape)[ok]
        assert_backward_error(A[ok], Li, upper, what=f"potrf_vbatched n={A.shape[-1]}")


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["tile", "tile-one", "binned"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_many(monkeypatch, family, dtype, upper):
    # More matrices than the persistent tile launches have blocks, of every tile count
    # up to past the tile family's largest order (float64 192), with failing minors in
    # every group: each matrix gets its own factor and info, on host and device metadata.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    sizes, offsets, values, groups, expect = _many_sizes_case(dtype)
    for meta in ((sizes, offsets), (sizes.cuda(), offsets.cuda())):
        L, info = ops.potrf_vbatched(values, *meta, 229, upper)
        _check_many_sizes(L, info, groups, expect, upper)


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["tile", "tile-one", "binned"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_potrf_vbatched_cuda_streams_agree(monkeypatch, family, dtype):
    # The binned and tile dispatches spread their launches over several streams
    # (BATCHCHOL_RAGGED_STREAMS): the same bits as on one stream, and outputs that the
    # caller's stream can use at once (read here before any synchronize).
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    sizes, offsets, values, groups, expect = _many_sizes_case(dtype)
    out = {}
    for width in ("1", "2", "3", "4"):
        monkeypatch.setenv("BATCHCHOL_RAGGED_STREAMS", width)
        L, info = ops.potrf_vbatched(values, sizes.cuda(), offsets.cuda(), 229, False)
        out[width] = (L.clone(), info.clone())
    _check_many_sizes(*out["3"], groups, expect, False)
    for width, (L, info) in out.items():
        assert torch.equal(info, out["1"][1]), width
        # Bit for bit; the failed factorizations hold NaN.
        torch.testing.assert_close(L, out["1"][0], rtol=0, atol=0, equal_nan=True,
                                   msg=f"{width} streams")


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["tile", "tile-one"])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_four_tile_columns(monkeypatch, family, upper):
    # Float64 matrices of four tile columns (97..128) run four-warp tile blocks on the
    # packed stage in their own group's launch (tile; tile_fixed_warps, as in fixed-size
    # batches) and eight-warp blocks on the unpacked stage in one launch with the
    # three-tile-column group (tile-one; tile_warps). Failing minors at tile edges; every
    # factor against its matrix. The launches are checked by kernel name.
    if torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("the float64 MMA update (the default build) needs sm_80 or later")
    monkeypatch.delenv("BATCHCHOL_TILE_MMA", raising=False)
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    sizes = [128, 97, 70, 120, 65, 100, 96, 127, 81, 112, 1, 40, 128, 99]
    c = RaggedCase(sizes, torch.float64, "cuda", cond=100.0)
    fails = {3: 33, 5: 97, 12: 128}  # matrix: failing minor
    A = c.A.clone()
    for i, m in fails.items():
        A[int(c.offsets[i]) + (m - 1) * (sizes[i] + 1)] = -1.0
    names = cuda_kernel_names(lambda: ops.potrf_vbatched(A, c.n.cuda(), c.offsets.cuda(), 128,
                                                         upper))
    tiles = [k for k in names if "potrf_tile_list_kernel<" in k]
    build = "256, true, false, 2," if family == "tile-one" else "128, true, true, 3,"
    four = [k for k in tiles if f"potrf_tile_list_kernel<double, {build}" in k]
    assert len(four) == 1 and len(tiles) == (1 if family == "tile-one" else 2), names
    L, info = ops.potrf_vbatched(A, c.n.cuda(), c.offsets.cuda(), 128, upper)
    assert info.tolist() == [fails.get(i, 0) for i in range(len(sizes))]
    check_outside_is_zero(L, sizes, c.offsets)
    for i, (Ai, Li) in enumerate(zip(c.spd, blocks_of(L, sizes, c.offsets))):
        if i not in fails:
            assert_backward_error(Ai, Li, upper, what=f"n={sizes[i]}")


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_warp64_group(monkeypatch, dtype, upper):
    # The sizes 33..64 run the warp64 list kernel (one warp per matrix, each at the
    # narrowest width that holds it), more matrices than its resident grid has warps,
    # so that warps loop. Failing minors at the widths' and the rows' edges. The factors
    # are those of fixed-size potrf bit for bit where it runs the warp64 routine
    # (float32 33..64, float64 33..48): the widths must cut only scratch entries, which
    # this checks for float64 (fixed-size float64 runs 48 wide throughout), and they
    # agree with the wide list kernel's (BATCHCHOL_RAGGED_WARP64=0) to rounding.
    for var in ("BATCHCHOL_VBATCHED_KERNEL", "BATCHCHOL_WARP64_FULL", "BATCHCHOL_POTRF_KERNEL",
                "BATCHCHOL_RAGGED_TILE_HI", "BATCHCHOL_RAGGED_WARP64"):
        monkeypatch.delenv(var, raising=False)
    g = torch.Generator().manual_seed(7)
    sizes = torch.cat([torch.arange(33, 65).repeat(100), torch.tensor([1, 20, 64])])
    sizes = sizes[torch.randperm(len(sizes), generator=g)]
    values, n, offsets = _dominant_ragged(sizes, dtype)
    expect, used = [0] * len(sizes), {}
    for m in (1, 32, 33, 40, 41, 48, 49, 64):
        for s in sorted({max(m, 33), 40, 48, 64}):
            if m <= s:  # a matrix of each size not failed yet
                used[s] = used.get(s, 0) + 1
                i = int((sizes == s).nonzero()[used[s]])
                values[int(offsets[i]) + (m - 1) * (s + 1)] = -1.0
                expect[i] = m
    names = cuda_kernel_names(lambda: ops.potrf_vbatched(values, n, offsets, 64, upper))
    assert any("potrf_warp64_list_kernel<" in k for k in names), names
    assert not any("potrf_wide_list_kernel<" in k for k in names), names
    L, info = ops.potrf_vbatched(values, n, offsets, 64, upper)
    assert info.tolist() == expect
    monkeypatch.setenv("BATCHCHOL_RAGGED_WARP64", "0")
    names = cuda_kernel_names(lambda: ops.potrf_vbatched(values, n, offsets, 64, upper))
    assert not any("potrf_warp64_list_kernel<" in k for k in names), names
    assert any("potrf_wide_list_kernel<" in k for k in names), names
    L_wide, info_wide = ops.potrf_vbatched(values, n, offsets, 64, upper)
    assert torch.equal(info, info_wide)
    for s in [1, 20] + list(range(33, 65)):  # also the warp family's neighbours
        idx = (sizes == s).nonzero().view(-1)
        ok = torch.tensor([expect[i] == 0 for i in idx.tolist()])
        o = offsets[idx.cuda()][:, None] + torch.arange(s * s, device="cuda")[None, :]
        raw = values[o].view(-1, s, s)
        Ls = L[o].view(-1, s, s)
        zero = Ls.tril(-1) if upper else Ls.triu(1)
        assert (zero == 0).all(), f"n={s}: the other triangle"
        A = raw.triu() + raw.triu(1).mT if upper else raw.tril() + raw.tril(-1).mT
        assert_backward_error(A[ok].cpu(), Ls[ok].cpu(), upper, what=f"n={s}")
        t = tol(dtype, s, 10.0)
        torch.testing.assert_close(Ls[ok], L_wide[o].view(-1, s, s)[ok], rtol=t,
                                   atol=t * float(Ls[ok].abs().max()), msg=f"n={s} wide")
        if 33 <= s <= (64 if dtype == torch.float32 else 48):
            Lf, info_f = ops.potrf(A[ok], upper)
            assert (info_f == 0).all()
            assert torch.equal(Ls[ok], Lf), f"n={s}: fixed-size warp64 bits"


def _skewed_case(dtype, small, large, max_n, seed):
    """`small` dominant matrices of orders 0..40 and `large` of 33..max_n (max_n among
    them), shuffled, built on the GPU; one large matrix fails at minor 40."""
    g = torch.Generator().manual_seed(seed)
    sizes = torch.cat([torch.randint(0, 41, (small,), generator=g),
                       torch.randint(33, max_n + 1, (large - 1,), generator=g),
                       torch.tensor([max_n])])
    sizes = sizes[torch.randperm(len(sizes), generator=g)]
    values, n, offsets = _dominant_ragged(sizes, dtype)
    bad = int((sizes >= 40).nonzero()[0])
    values[int(offsets[bad]) + 39 * (int(sizes[bad]) + 1)] = -1.0
    return sizes, values, n, offsets, bad


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("small,large,max_n", [(3000, 40, 300), (200, 20000, 72),
                                               (500, 60, 544), (500, 60, 545)])
@pytest.mark.parametrize("greedy", ["0", "1"])
def test_potrf_vbatched_cuda_listed_blocked(monkeypatch, dtype, upper, small, large, max_n, greedy):
    # Binned's lazy blocked launches over the device-side list of the matrices past 32
    # (grids capped at a few waves, their blocks and warps looping over the list; max_n <=
    # 544) against grids with a slot for every matrix (BATCHCHOL_RAGGED_LISTED=0; at
    # max_n = 545, past the grouping, both are those): the same bits and info. Skewed
    # batches, and 20,000 matrices past 32 so that every launch's blocks loop; one matrix
    # fails at minor 40. Lazy starts, and greedy ones (BATCHCHOL_RAGGED_BINNED_GREEDY).
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", "binned")
    monkeypatch.setenv("BATCHCHOL_RAGGED_BINNED_GREEDY", greedy)
    for var in ("BATCHCHOL_BLOCKED_GROUP", "BATCHCHOL_BLOCKED_LEFT", "BATCHCHOL_RAGGED_STREAMS",
                "BATCHCHOL_RAGGED_LISTED_WAVES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("BATCHCHOL_RAGGED_LISTED_GRID", raising=False)
    sizes, values, n, offsets, bad = _skewed_case(dtype, small, large, max_n, 7 + max_n)
    out = []
    for listed in ("1", "0"):
        monkeypatch.setenv("BATCHCHOL_RAGGED_LISTED", listed)
        run = lambda: out.append(ops.potrf_vbatched(values, n, offsets, max_n, upper))  # noqa: E731
        # Which layout the blocked kernels ran with, so that a dispatch that quietly
        # dropped the list (or kept it past 544) does not pass as equal bits.
        names = cuda_kernel_names(run) if listed == "1" else run()
        if listed == "1":
            blocked = [k for k in names if "blocked_" in k]
            assert blocked, "no blocked launch ran"
            assert all(("ListedLayout" in k) == (max_n <= 544) for k in blocked), blocked
    (L, info), (L0, info0) = out
    expect = [0] * len(sizes)
    expect[bad] = 40
    assert info.tolist() == expect
    assert torch.equal(info, info0)
    torch.testing.assert_close(L, L0, rtol=0, atol=0, equal_nan=True)
    # A sample of each order's factors against its matrix (the failed one: info only).
    for s in sizes.unique().tolist():
        idx = [i for i in (sizes == s).nonzero().view(-1)[-3:].tolist() if i != bad]
        if s == 0 or not idx:
            continue
        o = offsets[idx].cpu()[:, None] + torch.arange(s * s)[None, :]
        raw = values[o.cuda()].view(-1, s, s).cpu()
        A = raw.triu() + raw.triu(1).mT if upper else raw.tril() + raw.tril(-1).mT
        assert_backward_error(A, L[o.cuda()].view(-1, s, s).cpu(), upper, what=f"n={s}")


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("cap", ["1", "3"])
@pytest.mark.parametrize("left", ["0", "1"])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_listed_loops(monkeypatch, dtype, cap, left, upper):
    # BATCHCHOL_RAGGED_LISTED_GRID caps the listed launches at 1 or 3 blocks, so that
    # their blocks (the diagonal kernel's warps) loop over a list of a few dozen matrices
    # on any GPU, refilling the same shared memory for every item: left-looking and strip
    # updates against the whole-batch grids (BATCHCHOL_RAGGED_LISTED=0), bit for bit.
    # Two matrices have invalid metadata (negative sizes, one of them among the large):
    # they stay off the list, get info -1, and their blocks stay zero.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", "binned")
    monkeypatch.setenv("BATCHCHOL_BLOCKED_LEFT", left)
    monkeypatch.setenv("BATCHCHOL_BLOCKED_GROUP", "3")
    monkeypatch.delenv("BATCHCHOL_RAGGED_STREAMS", raising=False)
    sizes, values, n, offsets, bad = _skewed_case(dtype, 40, 30, 200, 11)
    invalid = [int(((sizes >= 1) & (sizes <= 32)).nonzero()[0]), int((sizes > 32).nonzero()[-1])]
    invalid = [i for i in invalid if i != bad]
    n = n.clone()
    n[invalid] = -3
    out = []
    for listed, grid in (("1", cap), ("0", None)):
        monkeypatch.setenv("BATCHCHOL_RAGGED_LISTED", listed)
        if grid is None:
            monkeypatch.delenv("BATCHCHOL_RAGGED_LISTED_GRID", raising=False)
        else:
            monkeypatch.setenv("BATCHCHOL_RAGGED_LISTED_GRID", grid)
        out.append(ops.potrf_vbatched(values, n, offsets, 200, upper))
    (L, info), (L0, info0) = out
    expect = [0] * len(sizes)
    expect[bad] = 40
    for i in invalid:
        expect[i] = -1
    assert info.tolist() == expect
    assert torch.equal(info, info0)
    torch.testing.assert_close(L, L0, rtol=0, atol=0, equal_nan=True)
    for i in invalid:
        o = int(offsets[i])
        assert (L[o : o + int(sizes[i]) ** 2] == 0).all()
    for i in (sizes > 32).nonzero().view(-1).tolist():
        if i == bad or i in invalid:
            continue
        s, o = int(sizes[i]), int(offsets[i])
        raw = values[o : o + s * s].view(s, s).cpu()
        A = raw.triu() + raw.triu(1).mT if upper else raw.tril() + raw.tril(-1).mT
        assert_backward_error(A, L[o : o + s * s].view(s, s).cpu(), upper, what=f"n={s}")


@pytest.mark.cuda
@pytest.mark.parametrize("value", ["0", "-2", "abc", "3x", "99999999999"])
def test_potrf_vbatched_cuda_listed_grid_bad_value(monkeypatch, value):
    # The switch is parsed strictly: a value that is not a positive integer fails before
    # any launch instead of being read as some other cap.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", "binned")
    monkeypatch.delenv("BATCHCHOL_RAGGED_LISTED", raising=False)
    monkeypatch.setenv("BATCHCHOL_RAGGED_LISTED_GRID", value)
    c = RaggedCase([40, 3, 70], torch.float64, "cuda")
    with pytest.raises(ValueError, match="BATCHCHOL_RAGGED_LISTED_GRID must be a positive integer"):
        ops.potrf_vbatched(c.A, c.n, c.offsets, None, False)
    monkeypatch.setenv("BATCHCHOL_RAGGED_LISTED_GRID", "2")
    L, info = ops.potrf_vbatched(c.A, c.n, c.offsets, None, False)
    assert info.tolist() == [0, 0, 0]
    for A, Li in zip(c.spd, blocks_of(L, c.sizes, c.offsets)):
        assert_backward_error(A, Li, False)


@pytest.mark.cuda
@pytest.mark.parametrize("tile_hi", ["64", "40", "0"])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_tile_share_switch(monkeypatch, tile_hi, upper):
    # BATCHCHOL_RAGGED_TILE_HI caps the sizes of the warp64/wide/tile launches (the rest go to
    # the lazy blocked launches; 0: none, every size past 32 lazy), float64 up to 229.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", "tile")
    monkeypatch.setenv("BATCHCHOL_RAGGED_TILE_HI", tile_hi)
    sizes, offsets, values, groups, expect = _many_sizes_case(torch.float64)
    L, info = ops.potrf_vbatched(values, sizes.cuda(), offsets.cuda(), 229, upper)
    _check_many_sizes(L, info, groups, expect, upper)


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["warp", "registers"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_potrf_vbatched_cuda_small_many(monkeypatch, family, dtype, upper):
    # 30,000 matrices of sizes 0..32: more in each order class than the warp family's
    # resident warps take in one round (float64 order 32: ~3,400), so its warps loop;
    # a failing minor in one matrix of each size, every matrix checked. posv (factor and
    # solve in one pass for the warp family) with two right-hand sides likewise.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    g = torch.Generator().manual_seed(2)
    sizes = torch.randint(0, 33, (30000,), generator=g)
    offsets = torch.cumsum(sizes * sizes, 0) - sizes * sizes
    values = torch.empty(int((sizes * sizes).sum()), dtype=dtype)
    expect = torch.zeros(len(sizes), dtype=torch.int32)
    groups = []
    for s in range(1, 33):
        idx = (sizes == s).nonzero().view(-1)
        A = make_spd((len(idx),), s, dtype, "cpu", cond=100.0)
        m = (s + 1) // 2
        A[0, m - 1, m - 1] = -1.0
        expect[idx[0]] = m
        where = (offsets[idx][:, None] + torch.arange(s * s)[None, :]).view(-1)
        values[where] = A.reshape(-1)
        groups.append((idx, where, A))
    values = values.cuda()
    for meta in ((sizes, offsets), (sizes.cuda(), offsets.cuda())):
        L, info = ops.potrf_vbatched(values, *meta, 32, upper)
        assert torch.equal(info.cpu(), expect)
        L = L.cpu()
        for idx, where, A in groups:
            assert_backward_error(A[1:], L[where].view(A.shape)[1:], upper,
                                  what=f"potrf_vbatched n={A.shape[-1]}")
    k = 2
    b_off = torch.cumsum(sizes * k, 0) - sizes * k
    B = torch.randn(int((sizes * k).sum()), dtype=dtype, generator=g)
    for n, off, boff in ((sizes, offsets, b_off), (sizes.cuda(), offsets.cuda(), b_off.cuda())):
        X, _, info = ops.posv_vbatched(values, n, off, B.cuda(), boff, k, 32, upper)
        assert torch.equal(info.cpu(), expect)
        X = X.cpu()
        for idx, where, A in groups:
            s = A.shape[-1]
            rows = (b_off[idx][:, None] + torch.arange(s * k)[None, :]).view(-1)
            Bi, Xi = B[rows].view(-1, s, k)[1:], X[rows].view(-1, s, k)[1:]
            assert_solve_residual(A[1:], Xi, Bi, what=f"posv_vbatched n={s}")


def _dominant_ragged(sizes, dtype):
    """A ragged batch on the GPU, built there: entries in [-1, 1], diagonal n_i + 1, so
    every matrix (its lower triangle read as symmetric) is positive definite."""
    n = sizes.cuda()
    offsets = torch.cumsum(n * n, 0) - n * n
    values = torch.rand(int((sizes * sizes).sum()), dtype=dtype, device="cuda") * 2 - 1
    return set_dominant_diagonal(values, n, offsets), n, offsets


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_vbatched_warp_launch_shapes_agree(dtype, upper):
    # The warp family's ragged launches take four shapes by batch size: potrf's prologue
    # and factorization in one cooperative launch (up to 2,048 float64 / 8,192 float32
    # matrices; posv takes the next shape), every order class in one launch with the size
    # groups built in one pass (up to 16,384 matrices), three launches with one pass (up to
    # 65,536), three with two passes (more). The leading matrices of one 70,000-matrix
    # batch of sizes 0..32, cut at 2,000 / 10,000 / 30,000 / all, get the same bits from
    # each, and a sample of each size is checked against its matrix.
    g = torch.Generator().manual_seed(5)
    sizes = torch.randint(0, 33, (70000,), generator=g)
    values, n, offsets = _dominant_ragged(sizes, dtype)
    b_off = torch.cumsum(n, 0) - n
    B = torch.randn(int(sizes.sum()), dtype=dtype, device="cuda")
    out = {}
    for count in (2000, 10000, 30000, 70000):
        L, info = ops.potrf_vbatched(values, n[:count], offsets[:count], 32, upper)
        X, _, pinfo = ops.posv_vbatched(values, n[:count], offsets[:count], B, b_off[:count], 1,
                                        32, upper)
        assert torch.equal(info, pinfo)
        assert (info == 0).all()
        out[count] = (L, X)
    for cut, later in ((2000, (10000, 30000, 70000)), (10000, (30000, 70000))):
        cut_l, cut_x = int(offsets[cut]), int(b_off[cut])
        for count in later:
            L, X = out[count]
            assert torch.equal(L[:cut_l], out[cut][0][:cut_l]), (cut, count)
            assert torch.equal(X[:cut_x], out[cut][1][:cut_x]), (cut, count)
    L, X = out[70000]
    for s in range(1, 33):
        idx = (sizes == s).nonzero().view(-1)[-40:]  # the last ones: past every cut
        o = offsets[idx.cuda()][:, None] + torch.arange(s * s, device="cuda")[None, :]
        raw = values[o].view(-1, s, s).cpu()
        A = raw.triu() + raw.triu(1).mT if upper else raw.tril() + raw.tril(-1).mT
        assert_backward_error(A, L[o].view(-1, s, s).cpu(), upper, what=f"n={s}")
        xo = b_off[idx.cuda()][:, None] + torch.arange(s, device="cuda")[None, :]
        assert_solve_residual(A, X[xo].view(-1, s, 1).cpu(), B[xo].view(-1, s, 1).cpu(),
                              what=f"posv n={s}")


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
@pytest.mark.parametrize("sizes", ["small", "medium"])
def test_potrf_vbatched_info_isolated(device, dtype, sizes):
    # A non-SPD, a NaN and an Inf matrix get their own info; the others are intact.
    c = RaggedCase(SIZE_SETS[sizes], dtype, device)
    spd = list(c.spd)
    big = [i for i, s in enumerate(c.sizes) if s >= 5][:3]
    k = 3
    spd[big[0]] = break_minor(spd[big[0]], k).to(dtype)
    spd[big[1]] = spd[big[1]].clone()
    spd[big[1]][2, 1] = float("nan")
    spd[big[2]] = spd[big[2]].clone()
    spd[big[2]][4, 4] = float("inf")
    A = c.A.clone()
    for i in big:
        o = int(c.offsets[i])
        A[o : o + spd[i].numel()] = spd[i].reshape(-1).to(device)
    L, info = ops.potrf_vbatched(A, c.n, c.offsets, None, False)
    info = info.tolist()
    assert info[big[0]] == k
    assert 1 <= info[big[1]] <= 3  # NaN at (2, 1) reaches pivot 2 or 3
    assert 1 <= info[big[2]] <= 5
    for i, (Ai, Li) in enumerate(zip(spd, blocks_of(L, c.sizes, c.offsets))):
        if i not in big:
            assert info[i] == 0
            assert_backward_error(Ai, Li, False)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes", ["small", "medium"])
@pytest.mark.parametrize("k", [1, 3, -1])
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_posv_vbatched(device, dtype, sizes, k, upper):
    c = RaggedCase(SIZE_SETS[sizes], dtype, device)
    blocks, B, b_off = c.rhs(k)
    X, L, info = ops.posv_vbatched(c.A, c.n, c.offsets, B, b_off, k, None, upper)
    assert info.tolist() == [0] * len(c.sizes)
    X2 = ops.potrs_vbatched(L, c.n, c.offsets, B, b_off, k, None, upper)
    cols = None if k < 0 else k
    check_outside_is_zero(X, c.sizes, b_off, cols)
    check_outside_is_zero(X2, c.sizes, b_off, cols)
    for A, Bi, Xi, X2i in zip(c.spd, blocks, blocks_of(X, c.sizes, b_off, cols),
                              blocks_of(X2, c.sizes, b_off, cols)):
        ref = torch.linalg.solve(to_ref(A), to_ref(Bi))
        bound = tol(dtype, A.shape[-1], cond2(A))
        assert_close_rel(Xi, ref, bound, "posv")
        assert_close_rel(X2i, ref, bound, "potrs")


# A ragged batch scaled into the subnormal range (entries near 2^-1052 in float64,
# 2^-132 in float32; test_cuda_kernel_families.py has the fixed-size twin): subnormal
# pivots, where 1 / d_k overflows. The factor scaled back and the solutions of the scaled
# systems against those of the batch as it was; the scaling rounds every entry to 2^-22
# (2^-17) of its matrix's norm, which sets the bound.
@pytest.mark.parametrize("family", ["cpu"] + [pytest.param(f, marks=pytest.mark.cuda)
                                              for f in CUDA_FAMILIES])
@pytest.mark.parametrize("dtype,e,rel", [(torch.float32, -66, 2.0 ** -17),
                                         (torch.float64, -526, 2.0 ** -22)])
@pytest.mark.parametrize("upper", [False, True])
def test_vbatched_subnormal_scaled(monkeypatch, family, dtype, e, rel, upper):
    device = "cpu" if family == "cpu" else "cuda"
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    c = RaggedCase(SIZE_SETS["small"] + SIZE_SETS["tiles"], dtype, device)
    blocks, B, b_off = c.rhs(1)
    As, Bs = c.A * 2.0 ** (2 * e), B * 2.0 ** (2 * e)
    L, _ = ops.potrf_vbatched(c.A, c.n, c.offsets, None, upper)
    Ls, info = ops.potrf_vbatched(As, c.n, c.offsets, None, upper)
    assert info.tolist() == [0] * len(c.sizes)
    X, _, _ = ops.posv_vbatched(c.A, c.n, c.offsets, B, b_off, 1, None, upper)
    Xs, Ls2, info = ops.posv_vbatched(As, c.n, c.offsets, Bs, b_off, 1, None, upper)
    assert info.tolist() == [0] * len(c.sizes)
    X2 = ops.potrs_vbatched(Ls, c.n, c.offsets, Bs, b_off, 1, None, upper)
    for i, A in enumerate(c.spd):
        n = c.sizes[i]
        if n == 0:
            continue
        bound = 8 * n * cond2(A) * rel
        f = slice(int(c.offsets[i]), int(c.offsets[i]) + n * n)
        x = slice(int(b_off[i]), int(b_off[i]) + n)
        Li, xi = L[f].view(n, n), X[x].view(n, 1)
        assert_close_rel(Ls[f].view(n, n) * 2.0 ** -e, Li, bound, f"n = {n}, potrf")
        assert_close_rel(Ls2[f].view(n, n) * 2.0 ** -e, Li, bound, f"n = {n}, posv L")
        assert_close_rel(Xs[x].view(n, 1), xi, bound, f"n = {n}, posv")
        assert_close_rel(X2[x].view(n, 1), xi, bound, f"n = {n}, potrs")


@pytest.mark.cuda
@pytest.mark.parametrize("max_k", ["0", "4096"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 3, -1])
@pytest.mark.parametrize("upper", [False, True])
def test_posv_vbatched_cuda_fused_switch(monkeypatch, max_k, dtype, k, upper):
    # max_n <= 32: the one-pass factor and solve (4096) and potrf + potrs (0) give the
    # same factor, info and solutions, for whatever k the crossover table picks either.
    monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", max_k)
    c = RaggedCase(SIZE_SETS["small"], dtype, "cuda")
    blocks, B, b_off = c.rhs(k)
    X, L, info = ops.posv_vbatched(c.A, c.n, c.offsets, B, b_off, k, None, upper)
    assert info.tolist() == [0] * len(c.sizes)
    cols = None if k < 0 else k
    check_outside_is_zero(X, c.sizes, b_off, cols)
    check_outside_is_zero(L, c.sizes, c.offsets)
    for A, Bi, Xi, Li in zip(c.spd, blocks, blocks_of(X, c.sizes, b_off, cols),
                             blocks_of(L, c.sizes, c.offsets)):
        assert_backward_error(A, Li, upper)
        ref = torch.linalg.solve(to_ref(A), to_ref(Bi))
        assert_close_rel(Xi, ref, tol(dtype, A.shape[-1], cond2(A)), "posv")


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes", ["small", "medium"])
@pytest.mark.parametrize("k", [1, 4, -1])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_trsm_vbatched(device, dtype, sizes, k, upper, left, transpose, unit):
    c = RaggedCase(SIZE_SETS[sizes], dtype, device)
    tris, T = c.tri(upper, unit)
    if unit:
        # The diagonal must not be read: poison it.
        for s, o in zip(c.sizes, c.offsets.tolist()):
            T[o : o + s * s].view(s, s).diagonal().fill_(float("nan"))
    blocks, B, b_off = c.rhs(k, left)
    X = ops.trsm_vbatched(T, c.n, c.offsets, B, b_off, k, None, upper, left, transpose, unit)
    for s, Ti, Bi, o in zip(c.sizes, tris, blocks, b_off.tolist()):
        Xi = X[o : o + Bi.numel()].view(Bi.shape)
        M = to_ref(Ti)
        if transpose:
            M = M.mH
        ref = torch.linalg.solve_triangular(M, to_ref(Bi), upper=upper != transpose, left=left,
                                            unitriangular=unit)
        assert_close_rel(Xi, ref, tol(dtype, s, cond2(Ti) if s else 1.0), "trsm")


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_device_metadata_matches_host(dtype):
    c = RaggedCase(SIZE_SETS["medium"], dtype, "cuda")
    n_d, off_d = c.meta(on_device=True)
    blocks, B, b_off = c.rhs(2)
    for max_n in (None, 80):
        L_h, i_h = ops.potrf_vbatched(c.A, c.n, c.offsets, max_n, False)
        L_d, i_d = ops.potrf_vbatched(c.A, n_d, off_d, max_n, False)
        torch.testing.assert_close(L_d, L_h, rtol=0, atol=0)
        assert i_d.tolist() == i_h.tolist()
        X_h = ops.posv_vbatched(c.A, c.n, c.offsets, B, b_off, 2, max_n, False)[0]
        X_d = ops.posv_vbatched(c.A, n_d, off_d, B, b_off.cuda(), 2, max_n, False)[0]
        torch.testing.assert_close(X_d, X_h, rtol=0, atol=0)


@pytest.mark.cuda
@pytest.mark.parametrize("family", [None, "greedy", "lazy"])
def test_device_metadata_invalid_entries_are_flagged(monkeypatch, family):
    # GPU-side metadata is validated on the GPU: invalid matrices get info < 0, their
    # solutions NaN, and the valid ones are untouched. Nothing is written elsewhere.
    # The blocked launches (greedy, lazy) set the info of the matrices no panel reaches.
    if family:
        monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    c = RaggedCase([4, 6, 5, 3, 7], torch.float64, "cuda", gap=0, reverse=False)
    n = c.n.clone()
    off = c.offsets.clone()
    n[1] = -2                      # negative size
    n[2] = 9                       # > max_n = 8
    off[3] = c.total - 2           # runs past the buffer
    off[4] = int(c.offsets[0]) + 1 # overlaps matrix 0 (which starts earlier)
    L, info = ops.potrf_vbatched(c.A, n.cuda(), off.cuda(), 8, False)
    assert info.tolist() == [0, -1, -2, -3, -4]
    assert_backward_error(c.spd[0], blocks_of(L, [4], c.offsets[:1])[0], False)
    assert (L[16:] == 0).all()
    blocks, B, b_off = c.rhs(1)
    X = ops.potrs_vbatched(L, n.cuda(), off.cuda(), B, b_off.cuda(), 1, 8, False)
    assert torch.isnan(X[int(b_off[4]): int(b_off[4]) + 7]).all()
    assert torch.isfinite(X[: 4]).all()


@pytest.mark.cuda
@pytest.mark.parametrize("family", ["greedy", "lazy"])
def test_potrf_vbatched_cuda_blocked_without_panels(monkeypatch, family):
    # max_n = 0 (every size 0, or every matrix invalid with GPU-side metadata and no
    # max_n given): no blocked launch has a panel, and info still comes from the step-0
    # diagonal launch (the blocked families have no init pass for lower factors). Small
    # blocks that held 7s go back to the caching allocator first, so a missing info is
    # likely to show as 7 in the first case; in the second, info must become -1.
    monkeypatch.setenv("BATCHCHOL_VBATCHED_KERNEL", family)
    A = torch.zeros(4, dtype=torch.float64, device="cuda")
    cases = (
        (torch.zeros(3, dtype=torch.int64), torch.tensor([0, 0, 0]), [0, 0, 0]),
        (torch.tensor([-1, -2], device="cuda"), torch.tensor([0, 1], device="cuda"), [-1, -1]),
    )
    for n, off, expect in cases:
        junk = [torch.full((len(expect),), 7, dtype=torch.int32, device="cuda") for _ in range(16)]
        del junk
        L, info = ops.potrf_vbatched(A, n, off, None, False)
        assert info.tolist() == expect
        assert (L == 0).all()


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("gap", [0, 3, 1500])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("on_device", [False, True])
def test_potrf_vbatched_zero_outside_blocks(device, gap, reverse, on_device):
    # NaN between the blocks and before the first one, blocks in and out of offset
    # order: L is the factor inside each block and zero everywhere else (on CUDA only
    # short gaps between blocks in order are zeroed, otherwise the whole buffer).
    if on_device and device == "cpu":
        pytest.skip("device metadata needs a GPU")
    c = RaggedCase(SIZE_SETS["medium"], torch.float64, device, gap=gap, reverse=reverse)
    lead = 2 * gap
    A = torch.cat([torch.full((lead,), float("nan"), dtype=c.dtype, device=device), c.A])
    offsets = c.offsets + lead
    n, off = (c.n.cuda(), offsets.cuda()) if on_device else (c.n, offsets)
    _, B, b_off = c.rhs(1)
    b_off = b_off.to(n.device)
    for fn in (lambda: ops.potrf_vbatched(A, n, off, 70, False)[0],
               lambda: ops.posv_vbatched(A, n, off, B, b_off, 1, 70, False)[1]):
        L = fn()
        check_outside_is_zero(L, c.sizes, offsets)
        for Ai, Li in zip(c.spd, blocks_of(L, c.sizes, offsets)):
            assert_backward_error(Ai, Li, False)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_empty_and_zero_sizes(device):
    A = torch.zeros(0, dtype=torch.float64, device=device)
    n = torch.zeros(0, dtype=torch.int64)
    L, info = ops.potrf_vbatched(A, n, n.clone(), None, False)
    assert L.shape == (0,) and info.shape == (0,)
    n = torch.tensor([0, 0], dtype=torch.int32)
    off = torch.tensor([0, 0], dtype=torch.int64)
    L, info = ops.potrf_vbatched(A, n, off, None, True)
    assert info.tolist() == [0, 0]
    X = ops.trsm_vbatched(A, n, off, A, off, 3, None, False, True, False, False)
    assert X.shape == (0,)


def strided(t):
    """The same entries as a non-contiguous view (every other element of a larger tensor)."""
    big = torch.full((2 * t.numel(),), -7, dtype=t.dtype, device=t.device)
    big[::2] = t
    return big[::2]


@pytest.mark.parametrize("device", DEVICE_PARAMS)
@pytest.mark.parametrize("on_device", [False, True])
@pytest.mark.parametrize("max_n", [None, 70])
def test_strided_metadata(device, on_device, max_n):
    # Sizes and offsets given as strided views must give what their contiguous copies
    # give: the kernels read the metadata as dense arrays. The private helper ops of the
    # backward passes take the forward's offsets.
    if on_device and device == "cpu":
        pytest.skip("device metadata needs a GPU")
    c = RaggedCase(SIZE_SETS["medium"], torch.float64, device)
    n, off = c.meta(on_device)
    _, B, b_off = c.rhs(2)
    b_off = b_off.to(n.device)
    sn, soff, sb = strided(n), strided(off), strided(b_off)
    assert not soff.is_contiguous()
    L, info = ops.potrf_vbatched(c.A, n, off, max_n, False)
    Ls, info_s = ops.potrf_vbatched(c.A, sn, soff, max_n, False)
    torch.testing.assert_close(Ls, L, rtol=0, atol=0)
    assert (info == 0).all() and torch.equal(info_s, info)
    X, L2, info2 = ops.posv_vbatched(c.A, n, off, B, b_off, 2, max_n, False)
    Xs, L2s, info2_s = ops.posv_vbatched(c.A, sn, soff, B, sb, 2, max_n, False)
    assert (info2 == 0).all() and torch.equal(info2_s, info2)
    pairs = [
        (X, Xs),
        (L2, L2s),
        (ops.potrs_vbatched(L, n, off, B, b_off, 2, max_n, False),
         ops.potrs_vbatched(L, sn, soff, B, sb, 2, max_n, False)),
        (ops.trsm_vbatched(L, n, off, B, b_off, 2, max_n, False, True, False, False),
         ops.trsm_vbatched(L, sn, soff, B, sb, 2, max_n, False, True, False, False)),
        (ops._tri_vbatched(L, n, off, 0, max_n), ops._tri_vbatched(L, sn, soff, 0, max_n)),
        (ops._gemm_vbatched(L, off, -1, -1, True, L, off, -1, -1, False, n, off, L.numel(), max_n),
         ops._gemm_vbatched(L, soff, -1, -1, True, L, soff, -1, -1, False, sn, soff, L.numel(),
                            max_n)),
    ]
    for want, got in pairs:
        assert torch.isfinite(want).all()
        torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICE_PARAMS)
def test_int32_sizes_and_max_n(device):
    c = RaggedCase(SIZE_SETS["small"], torch.float64, device)
    L1, _ = ops.potrf_vbatched(c.A, c.n.to(torch.int32), c.offsets, None, False)
    L2, _ = ops.potrf_vbatched(c.A, c.n, c.offsets, 40, False)
    torch.testing.assert_close(L1, L2, rtol=0, atol=0)


@pytest.mark.cuda
@pytest.mark.parametrize("sizes,dtype", [("small", torch.float32), ("tiles", torch.float32),
                                         ("tiles", torch.float64)])
def test_cuda_graph_capture_with_device_metadata(sizes, dtype):
    # "tiles" (max_n 321) takes the tile or binned dispatch, whose launches go over
    # several streams: the fork and joins must be captured into the graph.
    c = RaggedCase(SIZE_SETS[sizes], dtype, "cuda")
    max_n = max(SIZE_SETS[sizes])
    n_d, off_d = c.meta(on_device=True)
    blocks, B, b_off = c.rhs(1)
    b_off = b_off.cuda()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside the graph
        ops.posv_vbatched(c.A, n_d, off_d, B, b_off, 1, max_n, False)
        ops.potrf_vbatched(c.A, n_d, off_d, max_n, False)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        X, L, info = ops.posv_vbatched(c.A, n_d, off_d, B, b_off, 1, max_n, False)
        # "small" outside a graph takes the one-launch potrf, which leaves graphs to the
        # separate launches.
        L2, info2 = ops.potrf_vbatched(c.A, n_d, off_d, max_n, False)
    X.zero_()
    L.zero_()
    L2.zero_()
    g.replay()
    torch.cuda.synchronize()
    ref = ops.posv_vbatched(c.A, c.n, c.offsets, B, b_off.cpu(), 1, max_n, False)
    torch.testing.assert_close(X, ref[0])
    torch.testing.assert_close(L, ref[1])
    assert torch.equal(info, ref[2])
    ref2 = ops.potrf_vbatched(c.A, n_d, off_d, max_n, False)
    torch.testing.assert_close(L2, ref2[0], rtol=0, atol=0)
    assert torch.equal(info2, ref2[1])
