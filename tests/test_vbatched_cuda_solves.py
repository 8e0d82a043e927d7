"""The column-per-lane kernels of the ragged left solves (batches of systems of order
<= 16) on batches large enough that their warps make several trips, each slot taking matrices of other orders in turn (so their padding must
be rewritten), against float64 references; and the NaN of an invalid system larger
than any valid one."""

import pytest
import torch

from conftest import cond2, make_rhs, make_spd, make_tri, ops, tol, to_ref
from vbatched_util import layout

pytestmark = pytest.mark.cuda

# More systems than the column kernels' resident warps take in one trip on an H100
# (132 SMs x 16 warps x 16 float32 systems of order 16 with one column).
COUNT = 40_000


def mixed_sizes(seed):
    """Sizes 0..16: every padded order (4, 8, 16) of the ragged column kernels."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 17, (COUNT,), generator=g).tolist()


def by_size(sizes):
    groups = {}
    for i, s in enumerate(sizes):
        groups.setdefault(s, []).append(i)
    return groups


def packed(blocks, sizes, cols):
    """Blocks (row-major, in order, no gaps) in one buffer, and their offsets."""
    offsets, _ = layout(sizes, cols)
    return torch.cat([b.reshape(-1) for b in blocks]), offsets


def batch_blocks(sizes, make):
    """make(count, s) -> [count, ...] per order, scattered back into batch order."""
    blocks = [None] * len(sizes)
    for s, idx in by_size(sizes).items():
        made = make(len(idx), s)
        for j, i in enumerate(idx):
            blocks[i] = made[j]
    return blocks


def check_blocks(X, sizes, b_off, k, mats, rhs, reference, dtype, what):
    """Each order's solution blocks against reference(mats, rhs) (float64, batched)."""
    for s, idx in by_size(sizes).items():
        if s == 0:
            continue
        got = torch.stack([X[int(b_off[i]): int(b_off[i]) + s * k].view(s, k) for i in idx])
        M = torch.stack([mats[i] for i in idx])
        ref = reference(to_ref(M), to_ref(torch.stack([rhs[i] for i in idx])))
        err = ((to_ref(got) - ref).flatten(1).norm(dim=1)
               / ref.flatten(1).norm(dim=1).clamp_min(1e-300)).max().item()
        bound = tol(dtype, s, cond2(M))
        assert err <= bound, f"{what}, order {s}: relative error {err:.3e} > {bound:.3e}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 3, 9])
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_vbatched_many_mixed_sizes(dtype, k, upper):
    sizes = mixed_sizes(seed=k)
    spd = batch_blocks(sizes, lambda c, s: make_spd((c,), s, dtype))
    rhs = batch_blocks(sizes, lambda c, s: make_rhs((c, s, k), dtype))
    A, off = packed(spd, sizes, None)
    B, b_off = packed(rhs, sizes, k)
    n = torch.tensor(sizes)
    L, info = ops.potrf_vbatched(A.cuda(), n, off, None, upper)
    assert (info == 0).all()
    X = ops.potrs_vbatched(L, n, off, B.cuda(), b_off, k, None, upper).cpu()
    check_blocks(X, sizes, b_off, k, spd, rhs, torch.linalg.solve, dtype, "potrs")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 9])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_trsm_vbatched_many_mixed_sizes(dtype, k, upper, transpose, unit):
    sizes = mixed_sizes(seed=100 + k)
    tris = batch_blocks(sizes, lambda c, s: make_tri((c,), s, dtype, upper=upper, unit=unit))
    rhs = batch_blocks(sizes, lambda c, s: make_rhs((c, s, k), dtype))
    T, off = packed(tris, sizes, None)
    if unit:
        # The diagonal must not be read.
        for s, o in zip(sizes, off.tolist()):
            T[o: o + s * s].view(s, s).diagonal().fill_(float("nan"))
    B, b_off = packed(rhs, sizes, k)
    n = torch.tensor(sizes)
    X = ops.trsm_vbatched(T.cuda(), n, off, B.cuda(), b_off, k, None, upper, True, transpose,
                          unit).cpu()
    def reference(M, b):
        return torch.linalg.solve_triangular(M.mH if transpose else M, b,
                                             upper=upper != transpose, unitriangular=unit)

    check_blocks(X, sizes, b_off, k, tris, rhs, reference, dtype, "trsm")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 9])
def test_potrs_vbatched_invalid_large_system_gets_nan(dtype, k):
    # GPU-side metadata without max_n: the kernels are sized by the largest valid
    # order (16 here: the column kernels take the whole batch), while an invalid
    # matrix of order 40 (its block runs past the buffer) keeps its size; its solution
    # block, which is valid, must still be all NaN and the others finite.
    sizes = [16, 40, 9, 16, 3] * 50
    L, off = packed([make_tri((), s, dtype) for s in sizes], sizes, None)
    B, b_off = packed([make_rhs((s, k), dtype) for s in sizes], sizes, k)
    off = off.clone()
    off[1::5] = L.numel() - 10  # every order-40 matrix runs past the buffer
    X = ops.potrs_vbatched(L.cuda(), torch.tensor(sizes).cuda(), off.cuda(), B.cuda(),
                           b_off.cuda(), k, None, False).cpu()
    for i, s in enumerate(sizes):
        block = X[int(b_off[i]): int(b_off[i]) + s * k]
        if s == 40:
            assert torch.isnan(block).all(), f"system {i}: expected NaN"
        else:
            assert torch.isfinite(block).all(), f"system {i}: expected finite values"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 9])
def test_ragged_solve_kernel_switch(monkeypatch, dtype, k):
    # BATCHCHOL_RAGGED_SOLVE_KERNEL=warp keeps a batch that the column kernels would
    # take on the warp-per-system kernels: the same solutions up to rounding.
    sizes = mixed_sizes(seed=7)[:3000]
    tris = batch_blocks(sizes, lambda c, s: make_tri((c,), s, dtype))
    L, off = packed(tris, sizes, None)
    B, b_off = packed(batch_blocks(sizes, lambda c, s: make_rhs((c, s, k), dtype)), sizes, k)
    n = torch.tensor(sizes)
    args = (L.cuda(), n, off, B.cuda(), b_off, k, None, False)
    X_cols = ops.potrs_vbatched(*args)
    monkeypatch.setenv("BATCHCHOL_RAGGED_SOLVE_KERNEL", "warp")
    X_warp = ops.potrs_vbatched(*args)
    scale = X_warp.abs().max().item()
    assert (X_cols - X_warp).abs().max().item() <= tol(dtype, 32, 100.0) * scale
    monkeypatch.setenv("BATCHCHOL_RAGGED_SOLVE_KERNEL", "columns")
    with pytest.raises(RuntimeError, match="BATCHCHOL_RAGGED_SOLVE_KERNEL"):
        ops.potrs_vbatched(*args)


def ragged_triangles(dtype, k, upper, count, max_order, seed):
    """count triangular factors of orders 0..max_order and k-column right-hand sides,
    packed on the GPU: (sizes, tris, L, off, B, b_off, n, rhs), tris and rhs the host
    blocks for the references."""
    g = torch.Generator().manual_seed(seed)
    sizes = torch.randint(0, max_order + 1, (count,), generator=g).tolist()
    tris = batch_blocks(sizes, lambda c, s: make_tri((c,), s, dtype, upper=upper))
    L, off = packed(tris, sizes, None)
    B, b_off = packed(batch_blocks(sizes, lambda c, s: make_rhs((c, s, k), dtype)), sizes, k)
    rhs = [B[int(o): int(o) + s * k].view(s, k) for o, s in zip(b_off, sizes)]
    return sizes, tris, L.cuda(), off, B.cuda(), b_off, torch.tensor(sizes), rhs


def potrs_and_trsms(L, n, off, B, b_off, k, upper):
    """potrs, then trsm left / right, plain / transposed, on the same buffers (a right
    solve reads each block as k x n_i: the same size)."""
    out = [ops.potrs_vbatched(L, n, off, B, b_off, k, None, upper)]
    for left in (True, False):
        for transpose in (False, True):
            out.append(ops.trsm_vbatched(L, n, off, B, b_off, k, None, upper, left, transpose,
                                         False))
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("k", [1, 4, 8])
@pytest.mark.parametrize("upper", [False, True])
def test_ragged_async_tiles_bit_identical(monkeypatch, dtype, k, upper):
    # The warp-per-system ragged solves' tiles by cp.async (default below 16 columns) and
    # through registers (BATCHCHOL_RAGGED_ASYNC=0) are the same copies: bit-identical potrs
    # and trsm (left and right, plain and transposed). Orders 0..100: full and partial
    # tiles, several row blocks; float32 trsm with one column keeps the register stage
    # either way.
    sizes, tris, L, off, B, b_off, n, rhs = ragged_triangles(dtype, k, upper, 600, 100, 5 + k)

    def solves():
        return potrs_and_trsms(L, n, off, B, b_off, k, upper)

    for var in ("BATCHCHOL_TRSM_ASYNC32", "BATCHCHOL_RAGGED_SOLVE_KERNEL", "BATCHCHOL_RAGGED_MMA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("BATCHCHOL_RAGGED_ASYNC", raising=False)
    on = solves()
    monkeypatch.setenv("BATCHCHOL_RAGGED_ASYNC", "0")
    off_ = solves()
    for a, b in zip(on, off_):
        assert torch.equal(a, b)
    check_blocks(on[1].cpu(), sizes, b_off, k, tris, rhs,
                 lambda M, b: torch.linalg.solve_triangular(M, b, upper=upper), dtype, "trsm")


@pytest.mark.parametrize("k", [8, 16, 24])
@pytest.mark.parametrize("upper", [False, True])
def test_ragged_mma_solves(monkeypatch, k, upper):
    # Float64 8- and 16-column groups of the ragged warp solves on the MMAs (the default
    # for 16 columns, and for 8 past max_n = 128 as here) against the FMA loop
    # (BATCHCHOL_RAGGED_MMA=0), and potrs / trsm against float64 references. Orders
    # 0..200: partial and full row blocks, up to seven; k = 24: a 16- and an 8-column
    # group; right solves as well (their own column groups); a unit-diagonal solve; and
    # k = -1 (n_i columns each, as potrf_vbatched's backward solves: per-system partial
    # groups, and groups past a small system's columns).
    for var in ("BATCHCHOL_TRSM_MMA", "BATCHCHOL_TRSM_DIAGMMA", "BATCHCHOL_RAGGED_SOLVE_KERNEL"):
        monkeypatch.delenv(var, raising=False)
    dtype = torch.float64
    sizes, tris, L, off, B, b_off, n, rhs = ragged_triangles(dtype, k, upper, 300, 200, 11 + k)

    def solves():
        out = potrs_and_trsms(L, n, off, B, b_off, k, upper)
        out.append(ops.trsm_vbatched(L, n, off, B, b_off, k, None, upper, True, False, True))
        # k = -1: the square buffer L itself as the right-hand sides (offsets = off).
        out.append(ops.trsm_vbatched(L, n, off, L, off, -1, None, upper, True, True, False))
        out.append(ops.trsm_vbatched(L, n, off, L, off, -1, None, upper, False, False, False))
        return out

    monkeypatch.delenv("BATCHCHOL_RAGGED_MMA", raising=False)
    mma = solves()
    monkeypatch.setenv("BATCHCHOL_RAGGED_MMA", "0")
    fma = solves()
    for a, b in zip(mma, fma):
        scale = b.abs().max().item()
        assert (a - b).abs().max().item() <= tol(dtype, 200, 100.0) * scale
    check_blocks(mma[1].cpu(), sizes, b_off, k, tris, rhs,
                 lambda M, b: torch.linalg.solve_triangular(M, b, upper=upper), dtype, "trsm")
    check_blocks(mma[0].cpu(), sizes, b_off, k, [t.mH @ t if upper else t @ t.mH for t in tris],
                 rhs, torch.linalg.solve, dtype, "potrs")
    # k = -1, left, transposed: op(T) X = T with op(T) = T^H.
    sq = mma[6].cpu()
    for i, s in enumerate(sizes):
        if s == 0:
            continue
        T = tris[i].to(torch.float64)
        got = sq[int(off[i]): int(off[i]) + s * s].view(s, s)
        ref = torch.linalg.solve_triangular(T.mH, T, upper=not upper)
        err = ((got - ref).norm() / ref.norm()).item()
        assert err <= tol(dtype, s, cond2(T[None])), (i, s, err)


@pytest.mark.parametrize("k", [8, 16])
@pytest.mark.parametrize("upper", [False, True])
def test_ragged_y_keep_bit_identical(monkeypatch, k, upper):
    # The ragged float64 solves re-read solved row blocks with an L2 hint from block y_keep
    # on (BATCHCHOL_TRSM_YKEEP): the same copies, so the same bits for none hinted (off),
    # all (0), some (2) and the default's pick (unset). Orders 0..300 (up to ten row
    # blocks), max_n past 128: 8- and 16-column groups on the MMAs.
    for var in ("BATCHCHOL_TRSM_L2FIRST", "BATCHCHOL_TRSM_MMA", "BATCHCHOL_TRSM_YCHUNKS",
                "BATCHCHOL_RAGGED_MMA", "BATCHCHOL_RAGGED_SOLVE_KERNEL"):
        monkeypatch.delenv(var, raising=False)
    dtype = torch.float64
    sizes, tris, L, off, B, b_off, n, rhs = ragged_triangles(dtype, k, upper, 200, 300, 23 + k)
    out = []
    for value in ("off", "0", "2", None):
        if value is None:
            monkeypatch.delenv("BATCHCHOL_TRSM_YKEEP", raising=False)
        else:
            monkeypatch.setenv("BATCHCHOL_TRSM_YKEEP", value)
        out.append(potrs_and_trsms(L, n, off, B, b_off, k, upper))
    for later in out[1:]:
        for a, b in zip(out[0], later):
            assert torch.equal(a, b)
    check_blocks(out[0][1].cpu(), sizes, b_off, k, tris, rhs,
                 lambda M, b: torch.linalg.solve_triangular(M, b, upper=upper), dtype, "trsm")
