"""Every CUDA kernel family of trsm and potrs (BATCHCHOL_TRSM_KERNEL, read at every
call) against torch.linalg in float64, on batches large enough that every persistent
warp runs several systems back to back (the streaming kernels' copy pipeline then spans
systems), for orders around every tile packing and padding (4, 8, 16) and tile
boundary (32). The column-per-lane family only exists for real types and n <= 32, the
block-per-system family for real types and n <= 128, the panel family for real types
(elsewhere the variable falls back to the default), so they run only there, and also
with more than 32 columns (several column groups per system)."""

import itertools

import pytest
import torch

from conftest import cuda_kernel_names, fill_other_triangle, ops, tol

pytestmark = pytest.mark.cuda

KERNELS = ["stream", "warp", "cols", "block", "panel"]
REAL_ONLY = {"cols", "block", "panel"}
MAX_N = {"cols": 32, "block": 128}
ORDERS = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 97, 128, 257]
FLAGS = list(itertools.product([False, True], repeat=4))  # upper, left, transpose, unit
# Diagonally dominant triangles below: condition numbers stay under ~4.
COND = 4.0


@pytest.fixture
def kernel(request, monkeypatch):
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", request.param)
    return request.param


def orders(kernel):
    return [n for n in ORDERS if n <= MAX_N.get(kernel, n)]


def skip_complex_cols(kernel, dtype):
    if kernel in REAL_ONLY and dtype.is_complex:
        pytest.skip(f"the {kernel} kernels are real-only")


def batch_for(n):
    # ~4M matrix entries: 20,000 systems up to n = 14, then fewer.
    return max(3, min(20_000, (1 << 22) // (n * n)))


def make_triangle(batch, n, dtype, upper, unit, gen):
    """(clean float64 matrix, kernel input with NaN wherever the op must not read)."""
    rd = torch.complex128 if dtype.is_complex else torch.float64
    M = torch.randn(batch, n, n, dtype=rd, device="cuda", generator=gen) * (0.5 / n)
    M = M.triu(1) if upper else M.tril(-1)
    diag = torch.ones(n, device="cuda", dtype=torch.float64) if unit else \
        1 + torch.rand(batch, n, device="cuda", dtype=torch.float64, generator=gen)
    clean = M + torch.diag_embed(diag.to(rd).expand(batch, n))
    inp = fill_other_triangle(clean.to(dtype), upper, include_diagonal=unit)
    return clean, inp


def per_system_error(X, ref):
    d = (X.to(ref.dtype) - ref).flatten(1).norm(dim=1)
    return float((d / ref.flatten(1).norm(dim=1).clamp_min(1e-300)).max())


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("upper,left,transpose,unit", FLAGS[::3] + [FLAGS[-1]])
def test_trsm_many_systems(kernel, dtype, upper, left, transpose, unit):
    skip_complex_cols(kernel, dtype)
    gen = torch.Generator("cuda").manual_seed(7)
    for n in orders(kernel):
        batch = batch_for(n)
        clean, A = make_triangle(batch, n, dtype, upper, unit, gen)
        for k in (1, 3, 20) + ((40,) if kernel in REAL_ONLY else ()):
            shape = (batch, n, k) if left else (batch, k, n)
            B = torch.randn(shape, dtype=clean.dtype, device="cuda", generator=gen)
            X = ops.trsm(A, B.to(dtype), upper, left, transpose, unit)
            T, up = (clean.mH, not upper) if transpose else (clean, upper)
            ref = torch.linalg.solve_triangular(T, B.to(dtype).to(clean.dtype), upper=up,
                                                left=left)
            err = per_system_error(X, ref)
            assert err <= tol(dtype, n, COND), (kernel, n, k, err)


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_potrs_many_systems(kernel, dtype, upper):
    skip_complex_cols(kernel, dtype)
    gen = torch.Generator("cuda").manual_seed(11)
    for n in orders(kernel):
        batch = batch_for(n)
        clean, L = make_triangle(batch, n, dtype, upper, False, gen)
        for k in (1, 17) + ((33,) if kernel in REAL_ONLY else ()):
            B = torch.randn(batch, n, k, dtype=clean.dtype, device="cuda", generator=gen)
            X = ops.potrs(L, B.to(dtype), upper)
            ref = torch.cholesky_solve(B.to(dtype).to(clean.dtype), clean, upper=upper)
            err = per_system_error(X, ref)
            # cond(L L^H) = cond(L)^2
            assert err <= tol(dtype, n, COND**2), (kernel, n, k, err)


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("n", [3, 16, 40, 129])
def test_shared_matrix_many_systems(kernel, n):
    # One matrix for the whole batch (matrix stride 0 in the kernels).
    gen = torch.Generator("cuda").manual_seed(3)
    clean, A = make_triangle(1, n, torch.float32, False, False, gen)
    B = torch.randn(5000, n, 4, dtype=torch.float64, device="cuda", generator=gen)
    X = ops.trsm(A[0], B.float(), False, True, False, False)
    ref = torch.linalg.solve_triangular(clean[0], B.float().double(), upper=False)
    assert per_system_error(X, ref) <= tol(torch.float32, n, COND)
    P = ops.potrs(A[0], B.float(), False)
    ref = torch.cholesky_solve(B.float().double(), clean[0])
    assert per_system_error(P, ref) <= tol(torch.float32, n, COND**2)


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.complex128])
def test_column_major_matrices_read_in_place(kernel, dtype):
    # A column-major triangle (e.g. torch.linalg.cholesky's output) is read as stored,
    # with the orientation flipped, for every flag combination.
    skip_complex_cols(kernel, dtype)
    gen = torch.Generator("cuda").manual_seed(5)
    for n in (3, 12, 32, 70):
        for upper, left, transpose, unit in FLAGS:
            clean, A = make_triangle(600, n, dtype, upper, unit, gen)
            A = A.mT.contiguous().mT
            assert not A.is_contiguous() and A.mT.is_contiguous()
            B = torch.randn((600, n, 2) if left else (600, 2, n), dtype=dtype, device="cuda",
                            generator=gen)
            X = ops.trsm(A, B, upper, left, transpose, unit)
            T, up = (clean.mH, not upper) if transpose else (clean, upper)
            ref = torch.linalg.solve_triangular(T, B.to(clean.dtype), upper=up, left=left)
            assert per_system_error(X, ref) <= tol(dtype, n, COND), (n, upper, left, transpose)
            if not unit and not transpose and left:
                P = ops.potrs(A, B, upper)
                ref = torch.cholesky_solve(B.to(clean.dtype), clean, upper=upper)
                assert per_system_error(P, ref) <= tol(dtype, n, COND**2), (n, upper)
        # One shared column-major matrix (stride 0).
        X = ops.trsm(A[0], B, upper, left, transpose, unit)
        ref = torch.linalg.solve_triangular(T[0], B.to(clean.dtype), upper=up, left=left)
        assert per_system_error(X, ref) <= tol(dtype, n, COND)


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("n", [5, 13, 32])
def test_non_finite_rhs_stays_in_dependent_rows(kernel, upper, n):
    # Row r of B holding NaN reaches only the rows solved after it (as in LAPACK),
    # including where the order is padded (n = 5, 13) and padding rows run first.
    gen = torch.Generator("cuda").manual_seed(9)
    clean, A = make_triangle(64, n, torch.float64, upper, False, gen)
    B = torch.randn(64, n, 8, dtype=torch.float64, device="cuda", generator=gen)
    r = n // 2
    B[:, r, 3] = float("nan")
    X = ops.trsm(A, B, upper, True, False, False)
    ref = torch.linalg.solve_triangular(clean, B, upper=upper)
    clean_rows = slice(r + 1, n) if upper else slice(0, r)
    assert torch.isnan(X[:, r, 3]).all()
    assert torch.isfinite(X[:, clean_rows]).all()
    assert torch.isfinite(X[..., [0, 1, 2, 4, 5, 6, 7]]).all()
    assert torch.allclose(X[:, clean_rows], ref[:, clean_rows], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("warps", ["4", "8"])
@pytest.mark.parametrize("columns", ["1", "4", "8", "16"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_panel_orders_and_column_groups(monkeypatch, warps, columns, dtype):
    # The panel kernels past the orders of the sweep above: several row blocks per warp
    # (snake order), partial last blocks, column groups narrower than k (BATCHCHOL_PANEL_KC
    # caps the group), both block sizes, one and a few systems.
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "panel")
    monkeypatch.setenv("BATCHCHOL_PANEL_WARPS", warps)
    monkeypatch.setenv("BATCHCHOL_PANEL_KC", columns)
    gen = torch.Generator("cuda").manual_seed(13)
    for n, batch in ((129, 5), (300, 3), (515, 2), (1100, 1)):
        for upper, left, transpose, unit in FLAGS[::5]:
            clean, A = make_triangle(batch, n, dtype, upper, unit, gen)
            k = 19 if n < 1000 else 5
            shape = (batch, n, k) if left else (batch, k, n)
            B = torch.randn(shape, dtype=torch.float64, device="cuda", generator=gen)
            X = ops.trsm(A, B.to(dtype), upper, left, transpose, unit)
            T, up = (clean.mH, not upper) if transpose else (clean, upper)
            ref = torch.linalg.solve_triangular(T, B.to(dtype).double(), upper=up, left=left)
            err = per_system_error(X, ref)
            assert err <= tol(dtype, n, COND), (n, upper, left, transpose, unit, err)
        for upper in (False, True):
            clean, L = make_triangle(batch, n, dtype, upper, False, gen)
            B = torch.randn(batch, n, 6, dtype=torch.float64, device="cuda", generator=gen)
            X = ops.potrs(L, B.to(dtype), upper)
            ref = torch.cholesky_solve(B.to(dtype).double(), clean, upper=upper)
            assert per_system_error(X, ref) <= tol(dtype, n, COND**2), (n, upper)


@pytest.mark.parametrize("io", ["0", "1"])
@pytest.mark.parametrize("dtype,mma", [(torch.float64, "0"), (torch.float64, "1"),
                                       (torch.float32, "1")])
@pytest.mark.parametrize("n", [20, 33, 64, 100, 160, 257])
def test_warp_column_groups(monkeypatch, dtype, mma, io, n):
    # The warp solves' 8- and 16-column groups: float64 off-diagonal products on the MMAs
    # (BATCHCHOL_TRSM_MMA, default on) or the FMA loop; right-hand sides in and solved
    # rows out by 16-byte chunks (BATCHCHOL_TRSM_IOCHUNKS, default on: left solves with
    # full groups, k = 8, 16, 24) or by each lane; full and partial groups (k = 12 runs
    # one 16-column group with 12 columns), partial last row blocks (n = 20, 33, 100, 257),
    # every orientation of the triangle (column-major as torch.linalg.cholesky returns it,
    # too), both passes of potrs (the second one in place).
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    monkeypatch.setenv("BATCHCHOL_TRSM_MMA", mma)
    monkeypatch.setenv("BATCHCHOL_TRSM_IOCHUNKS", io)
    gen = torch.Generator("cuda").manual_seed(17)
    batch = batch_for(n)
    for upper, left, transpose, unit in FLAGS[::3]:
        clean, A = make_triangle(batch, n, dtype, upper, unit, gen)
        for k in (8, 12, 16, 24):
            shape = (batch, n, k) if left else (batch, k, n)
            B = torch.randn(shape, dtype=torch.float64, device="cuda", generator=gen)
            X = ops.trsm(A, B.to(dtype), upper, left, transpose, unit)
            T, up = (clean.mH, not upper) if transpose else (clean, upper)
            ref = torch.linalg.solve_triangular(T, B, upper=up, left=left)
            err = per_system_error(X, ref)
            assert err <= tol(dtype, n, COND), (upper, left, transpose, unit, k, err)
    for upper in (False, True):
        clean, L = make_triangle(batch, n, dtype, upper, False, gen)
        for Lin in (L, L.mT.contiguous().mT):
            for k in (8, 16):
                B = torch.randn(batch, n, k, dtype=torch.float64, device="cuda", generator=gen)
                X = ops.potrs(Lin, B.to(dtype), upper)
                ref = torch.cholesky_solve(B, clean, upper=upper)
                assert per_system_error(X, ref) <= tol(dtype, n, COND**2), (upper, k)


def check_switch_bit_identical(monkeypatch, var, A, B, clean, upper, dtype, values=("0", "1")):
    """trsm and potrs of (A, B) with the environment switch var at each of values (the
    first off; None: unset): bit-identical results, within the tolerances of the float64
    references from clean."""
    n = A.shape[-1]
    out = []
    for value in values:
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)
        out.append((ops.trsm(A, B, upper, True, False, False), ops.potrs(A, B, upper)))
    for later in out[1:]:
        for a, b in zip(out[0], later):
            assert torch.equal(a, b)
    Bd = B.to(clean.dtype)  # complex128 for complex inputs: B.double() drops the imaginary parts
    ref = torch.linalg.solve_triangular(clean, Bd, upper=upper)
    assert per_system_error(out[-1][0], ref) <= tol(dtype, n, COND)
    ref = torch.cholesky_solve(Bd, clean, upper=upper)
    assert per_system_error(out[-1][1], ref) <= tol(dtype, n, COND**2)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("column_major", [False, True])
def test_warp_l2_policy_bit_identical(monkeypatch, upper, column_major):
    # The MMA path's full off-diagonal tiles and the chunked right-hand sides copied
    # under the L2 evict-first policy (BATCHCHOL_TRSM_L2FIRST) are the same copies with a
    # cache hint: bit-identical results without it. n = 200 has full row blocks (hinted
    # tiles and rows) and a partial last one (its rows below n hinted; its tiles and the
    # rows past n zero-filled, not hinted).
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    gen = torch.Generator("cuda").manual_seed(31)
    n, k, batch = 200, 16, 64
    clean, L = make_triangle(batch, n, torch.float64, upper, False, gen)
    Lin = L.mT.contiguous().mT if column_major else L
    B = torch.randn(batch, n, k, dtype=torch.float64, device="cuda", generator=gen)
    check_switch_bit_identical(monkeypatch, "BATCHCHOL_TRSM_L2FIRST", Lin, B, clean, upper,
                               torch.float64)


@pytest.mark.parametrize("dtype,k", [(torch.float64, 16), (torch.float64, 8),
                                     (torch.float64, 4), (torch.float64, 2),
                                     (torch.float32, 16)])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("column_major", [False, True])
def test_y_keep_bit_identical(monkeypatch, dtype, k, upper, column_major):
    # The products' re-reads of solved row blocks with an L2 hint from block y_keep on
    # (BATCHCHOL_TRSM_YKEEP): the same copies, so bit-identical results for every y_keep:
    # none hinted (off), all (0), some (2), the default's pick (unset, auto; at this batch
    # it keeps every block: the pick moves speed only). n = 200: six full row blocks and
    # a partial one; float64 on the MMAs (16- and 8-column groups) and on the FMA loop (2
    # and 4: chunked rows too), float32 on the FMA loop.
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    for var in ("BATCHCHOL_TRSM_MAX_CPW", "BATCHCHOL_TRSM_L2FIRST", "BATCHCHOL_TRSM_MMA",
                "BATCHCHOL_TRSM_YCHUNKS"):
        monkeypatch.delenv(var, raising=False)
    gen = torch.Generator("cuda").manual_seed(61)
    n, batch = 200, 400
    clean, L = make_triangle(batch, n, dtype, upper, False, gen)
    Lin = L.mT.contiguous().mT if column_major else L
    B = torch.randn(batch, n, k, dtype=dtype, device="cuda", generator=gen)
    check_switch_bit_identical(monkeypatch, "BATCHCHOL_TRSM_YKEEP", Lin, B, clean, upper, dtype,
                               values=("off", "0", "2", None, "auto"))


@pytest.mark.parametrize("value", ["x", "-1", "2x", ""])
def test_y_keep_bad_value(monkeypatch, value):
    # A mistyped BATCHCHOL_TRSM_YKEEP raises instead of reading as 0 (every block hinted).
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    monkeypatch.delenv("BATCHCHOL_TRSM_L2FIRST", raising=False)
    monkeypatch.setenv("BATCHCHOL_TRSM_YKEEP", value)
    gen = torch.Generator("cuda").manual_seed(3)
    _, L = make_triangle(4, 64, torch.float64, False, False, gen)
    B = torch.randn(4, 64, 16, dtype=torch.float64, device="cuda", generator=gen)
    with pytest.raises(RuntimeError, match="BATCHCHOL_TRSM_YKEEP"):
        ops.trsm(L, B, False, True, False, False)


@pytest.mark.parametrize("kernel,dtype,k,async32", [
    ("warp", torch.float32, 1, "1"), ("warp", torch.float32, 1, "0"),
    ("warp", torch.float32, 16, "1"), ("warp", torch.float64, 1, "1"),
    ("warp", torch.float64, 4, "1"), ("warp", torch.complex64, 2, "1"),
    ("panel", torch.float32, 4, "1"), ("panel", torch.float64, 1, "1")])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("column_major", [False, True])
def test_full_tiles_bit_identical(monkeypatch, kernel, dtype, k, async32, upper, column_major):
    # Full off-diagonal tiles staged without the per-entry tests (BATCHCHOL_TRSM_FULLTILES:
    # trsm_stage_tile's register stage, trsm_issue_tile's copies for the real warp
    # solves, float32 by default and through registers with BATCHCHOL_TRSM_ASYNC32=0, and
    # for the panel solves) read the same entries: bit-identical results. n = 200 has full
    # row blocks and a partial last one (its tiles still tested); both orientations of the
    # stored triangle and both passes of potrs walk the tiles forward and backward.
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", kernel)
    monkeypatch.setenv("BATCHCHOL_TRSM_ASYNC32", async32)
    gen = torch.Generator("cuda").manual_seed(41)
    n, batch = 200, 48
    clean, L = make_triangle(batch, n, dtype, upper, False, gen)
    Lin = L.mT.contiguous().mT if column_major else L
    rd = torch.complex128 if dtype.is_complex else torch.float64
    B = torch.randn(batch, n, k, dtype=rd, device="cuda", generator=gen).to(dtype)
    check_switch_bit_identical(monkeypatch, "BATCHCHOL_TRSM_FULLTILES", Lin, B, clean, upper,
                               dtype)


@pytest.mark.parametrize("k", [1, 4, 16])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("column_major", [False, True])
def test_float32_async_tiles_bit_identical(monkeypatch, k, upper, column_major):
    # The float32 warp solves' tiles by cp.async or through registers
    # (BATCHCHOL_TRSM_ASYNC32): the same entries staged, bit-identical results; n = 300
    # has full, diagonal and partial tiles. (trsm's 16-column groups, and its one-column
    # solves up to n = 256, keep the register stage either way: the potrs half covers the
    # copies there.)
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    gen = torch.Generator("cuda").manual_seed(43)
    n, batch = 300, 48
    clean, L = make_triangle(batch, n, torch.float32, upper, False, gen)
    Lin = L.mT.contiguous().mT if column_major else L
    B = torch.randn(batch, n, k, dtype=torch.float64, device="cuda", generator=gen).float()
    check_switch_bit_identical(monkeypatch, "BATCHCHOL_TRSM_ASYNC32", Lin, B, clean, upper,
                               torch.float32)


@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("left", [True, False])
def test_float32_async_tiles_unit_diagonal(monkeypatch, k, left):
    # Unit diagonals, where the copies zero-fill the diagonal the register stage sets to
    # 1 (the solves take it as 1 either way), on both sides: bit-identical, and right.
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    gen = torch.Generator("cuda").manual_seed(47)
    n, batch = 300, 48  # past 256, where one-column float32 solves take the copies too
    clean, L = make_triangle(batch, n, torch.float32, False, True, gen)
    shape = (batch, n, k) if left else (batch, k, n)
    B = torch.randn(*shape, dtype=torch.float64, device="cuda", generator=gen).float()
    out = []
    for value in ("0", "1"):
        monkeypatch.setenv("BATCHCHOL_TRSM_ASYNC32", value)
        out.append(ops.trsm(L, B, False, left, False, True))
    assert torch.equal(out[0], out[1])
    ref = torch.linalg.solve_triangular(clean, B.double(), upper=False, left=left,
                                        unitriangular=True)
    assert per_system_error(out[1], ref) <= tol(torch.float32, n, COND)


@pytest.mark.parametrize("n", [77, 100, 116, 128, 200])
@pytest.mark.parametrize("k", [6, 8, 12, 16])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_warp_diag_mma_matches(monkeypatch, n, k, upper, unit):
    # The MMA path's diagonal blocks on the MMAs (BATCHCHOL_TRSM_DIAGMMA): 8 x 8
    # sub-blocks by substitution, the rows below by m8n8k4 products. Another order of
    # operations than the one-row-per-lane loop (different bits where rows divide: the
    # switch is live), both within the float64 tolerance of the reference and of each
    # other. The last row block has 13 (n = 77: an update into a partly filled 8-row
    # group), 4 (100: a partial sub-block, no update), 20 (116), 32 or 8 rows; 6 and 12
    # columns leave an 8- or 16-column group partly empty (its rows go out by the lanes,
    # not by chunks); the factor column-major as torch returns it.
    clear_warp_switches(monkeypatch)
    if torch.cuda.get_device_properties(0).major < 8:
        pytest.skip("the float64 MMAs need sm_80")
    gen = torch.Generator("cuda").manual_seed(53)
    batch = 40
    clean, L = make_triangle(batch, n, torch.float64, upper, unit, gen)
    Lin = L.mT.contiguous().mT
    B = torch.randn(batch, n, k, dtype=torch.float64, device="cuda", generator=gen)
    ref = torch.linalg.solve_triangular(clean, B, upper=upper, unitriangular=unit)
    xs, ps = [], []
    for value in ("0", "1"):
        monkeypatch.setenv("BATCHCHOL_TRSM_DIAGMMA", value)
        xs.append(ops.trsm(Lin, B, upper, True, False, unit))
        assert per_system_error(xs[-1], ref) <= tol(torch.float64, n, COND)
        if not unit:  # the kernel input's diagonal is NaN for unit triangles
            ps.append(ops.potrs(Lin, B, upper))
            refp = torch.cholesky_solve(B, clean, upper=upper)
            assert per_system_error(ps[-1], refp) <= tol(torch.float64, n, COND**2)
    if not unit:
        # Unit triangles divide by nothing, and the m8n8k4 products accumulate in the
        # loop's order (an H100 gave equal bits): only the reciprocals tell them apart.
        assert not torch.equal(xs[0], xs[1])
    assert per_system_error(xs[0], xs[1]) <= tol(torch.float64, n, COND)
    if ps:
        assert per_system_error(ps[0], ps[1]) <= tol(torch.float64, n, COND**2)


def clear_warp_switches(monkeypatch):
    # The switches that would change which warp kernel a potrs takes.
    for var in ("BATCHCHOL_POTRS_MMA_BLOCKS", "BATCHCHOL_TRSM_MMA", "BATCHCHOL_TRSM_MAX_CPW"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")


MMA_KERNELS = {"3": "potrs_warp_mma_kernel", "4": "potrs_warp_mma4_kernel"}


@pytest.mark.parametrize("k", [8, 16])
def test_potrs_mma_blocks_bit_identical(monkeypatch, k):
    # potrs's MMA warp solve at three or four blocks per SM (BATCHCHOL_POTRS_MMA_BLOCKS,
    # each value's kernel checked by name): the same code under two register budgets
    # (four spills at 16 columns), so the same bits, a partial last row block (n = 200)
    # included.
    clear_warp_switches(monkeypatch)
    gen = torch.Generator("cuda").manual_seed(37)
    n, batch = 200, 64
    clean, L = make_triangle(batch, n, torch.float64, False, False, gen)
    B = torch.randn(batch, n, k, dtype=torch.float64, device="cuda", generator=gen)
    for value, name in MMA_KERNELS.items():
        monkeypatch.setenv("BATCHCHOL_POTRS_MMA_BLOCKS", value)
        names = cuda_kernel_names(lambda: ops.potrs(L, B, False))
        assert [s for s in names if "potrs_warp" in s and name in s], (value, names)
    check_switch_bit_identical(monkeypatch, "BATCHCHOL_POTRS_MMA_BLOCKS", L, B, clean, False,
                               torch.float64, values=tuple(MMA_KERNELS))


def test_potrs_mma_four_blocks_only_for_one_wave(monkeypatch):
    # Four blocks per SM only where they hold in one wave the warps (systems x column
    # groups) that three do not: 14 warps per SM (one 16-column group per system) take
    # potrs_warp_mma4_kernel, 20 per SM (two waves at four blocks too) the three-block one.
    # The rule's premise (3 blocks per SM by registers, 4 by registers and shared memory
    # for the other) holds on sm_90 (228 KB of shared memory per SM), where it was measured.
    props = torch.cuda.get_device_properties(0)
    if (props.major, props.minor) != (9, 0):
        pytest.skip("the three / four block occupancies are those of sm_90")
    clear_warp_switches(monkeypatch)
    gen = torch.Generator("cuda").manual_seed(39)
    n = 72
    for per_sm, four in ((14, True), (20, False)):
        batch = per_sm * props.multi_processor_count
        clean, L = make_triangle(batch, n, torch.float64, False, False, gen)
        B = torch.randn(batch, n, 16, dtype=torch.float64, device="cuda", generator=gen)
        names = cuda_kernel_names(lambda: ops.potrs(L, B, False))
        assert any(MMA_KERNELS["4"] in s for s in names) == four, names
        assert any(MMA_KERNELS["3"] in s for s in names) == (not four), names
        X = ops.potrs(L, B, False)
        assert per_system_error(X, torch.cholesky_solve(B, clean)) <= tol(torch.float64, n,
                                                                           COND**2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("offset", [0, 1])
def test_warp_chunked_rows_match_lane_rows(monkeypatch, dtype, offset):
    # Right-hand sides in and solved rows out by 16-byte chunks (BATCHCHOL_TRSM_IOCHUNKS)
    # move the same values as the lanes' own loads and stores: bit-identical results.
    # offset = 1 element puts B and X off 16 bytes (B a view into a larger buffer, X a
    # fresh tensor), so loads and stores take different paths in one call.
    monkeypatch.setenv("BATCHCHOL_TRSM_KERNEL", "warp")
    gen = torch.Generator("cuda").manual_seed(23)
    n, k, batch = 100, 16, 300
    clean, L = make_triangle(batch, n, dtype, False, False, gen)
    buf = torch.randn(batch * n * k + offset, dtype=torch.float64, device="cuda",
                      generator=gen).to(dtype)
    B = buf[offset:].view(batch, n, k)
    assert (B.data_ptr() % 16 == 0) == (offset == 0)
    check_switch_bit_identical(monkeypatch, "BATCHCHOL_TRSM_IOCHUNKS", L, B, clean, False, dtype)
