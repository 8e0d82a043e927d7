"""Every CUDA kernel family of potrf and posv against torch.linalg, whichever one the
size dispatch would pick: BATCHCHOL_POTRF_KERNEL forces a potrf family (the library
reads it at every call; a family that cannot serve n falls back to the default), and
BATCHCHOL_WARP_P32 switches the warp family's variants, BATCHCHOL_POSV_FUSED_MAX_K the
columns up to which posv runs a fused kernel (warp, wide or tile), and
BATCHCHOL_BLOCKED_GROUP / BATCHCHOL_BLOCKED_LEFT the blocked family's update grouping and
whether a group's later panels are updated left-looking."""

import re

import pytest
import torch

from conftest import (
    assert_close_rel,
    assert_factor_ok,
    break_minor,
    cond2,
    cuda_kernel_names,
    fill_other_triangle,
    make_rhs,
    make_spd,
    ops,
    reconstruct,
    to_ref,
    tol,
)

pytestmark = pytest.mark.cuda

FAMILIES = [
    "warp", "registers", "wide", "tile2", "tile4", "tile", "tile16", "left", "left-split", "shared",
    "blocked",
]
# Around every padded order of the warp family and every panel boundary of the others.
SMALL = list(range(1, 34))
LARGE = [33, 63, 64, 65, 96, 127, 128, 129, 160, 255, 256, 257, 300, 511, 512]


@pytest.fixture
def family(request, monkeypatch):
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", request.param)
    return request.param


@pytest.mark.parametrize("family", FAMILIES, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("upper", [False, True])
def test_family_small_orders(family, dtype, upper):
    for n in SMALL:
        A = make_spd((5,), n, dtype, "cuda", cond=100.0)
        A[3] = break_minor(A[3], (n + 1) // 2).to(dtype)
        L, info = ops.potrf(fill_other_triangle(A, upper), upper)
        assert info.tolist() == [0, 0, 0, (n + 1) // 2, 0], (n, info.tolist())
        good = [0, 1, 2, 4]
        assert_factor_ok(A[good], L[good], info[good], upper)


@pytest.mark.parametrize("family", FAMILIES, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_family_large_orders(family, dtype, upper):
    for n in LARGE:
        A = make_spd((3,), n, dtype, "cuda", cond=100.0)
        A[1, n - 1, n - 1] = float("nan")
        L, info = ops.potrf(fill_other_triangle(A, upper), upper)
        assert info.tolist() == [0, n, 0], (n, info.tolist())
        assert_factor_ok(A[[0, 2]], L[[0, 2]], info[[0, 2]], upper)


@pytest.mark.parametrize("family", FAMILIES, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_family_failing_minor(family, dtype, upper):
    # A negative diagonal entry at m makes the leading minor of order m the first that
    # is not positive definite, whichever panel, band or tile it falls in; the matrices
    # around it stay exact.
    for n, m in ((50, 20), (64, 40), (70, 1), (70, 33), (130, 64), (130, 97), (200, 200)):
        A = make_spd((3,), n, dtype, "cuda", cond=100.0)
        A[1, m - 1, m - 1] = -1.0
        L, info = ops.potrf(fill_other_triangle(A, upper), upper)
        assert info.tolist() == [0, m, 0], (n, m, info.tolist())
        assert_factor_ok(A[[0, 2]], L[[0, 2]], info[[0, 2]], upper)


# Power-of-two scalings near the ends of the exponent range (A 2^(2e) factors to
# L 2^e, exactly in exact arithmetic) and subnormal pivots: the pivot steps take
# 1 / sqrt(d) by rsqrt (scalar_ops.cuh), which must neither overflow nor flush there.
@pytest.mark.parametrize("family", FAMILIES, indirect=True)
@pytest.mark.parametrize("dtype,e", [(torch.float32, 55), (torch.float32, -55),
                                     (torch.float64, 490), (torch.float64, -490)])
def test_family_scaled_range(family, dtype, e):
    for n in (7, 24, 32, 48, 64, 100, 130):
        A = make_spd((3,), n, dtype, "cuda", cond=100.0)
        L, info = ops.potrf(A, False)
        Ls, infos = ops.potrf(A * 2.0 ** (2 * e), False)
        assert infos.tolist() == [0, 0, 0], (n, infos.tolist())
        assert bool(torch.isfinite(Ls).all()), n
        assert_close_rel(Ls * 2.0 ** -e, L, tol(dtype, n, cond2(A)), f"n = {n}, scaled")


@pytest.mark.parametrize("family", FAMILIES, indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_family_subnormal_pivots(family, dtype):
    tiny = torch.finfo(dtype).tiny
    for n in (5, 32, 64, 128):
        d = (torch.rand(2, n, dtype=torch.float64) + 1) * (tiny / 2 ** 12)  # subnormal
        A = torch.diag_embed(d).to(dtype)
        L, info = ops.potrf(A.cuda(), False)
        assert info.tolist() == [0, 0], (n, info.tolist())
        expect = torch.diag_embed(A.diagonal(dim1=-2, dim2=-1).double().sqrt())
        assert_close_rel(L, expect, 4 * torch.finfo(dtype).eps, f"n = {n}")


# Positive definite matrices scaled into the subnormal range (entries near 2^-1052 in
# float64, 2^-132 in float32), so that the pivots are subnormal and 1 / d_k overflows: the
# factor scaled back, and the solution of the scaled system (right-hand sides scaled
# alike), against those of the matrix as it was. The scaling rounds every entry to
# 2^-22 (2^-17) of the matrix's norm, which sets the bound.
@pytest.mark.parametrize("family", FAMILIES, indirect=True)
@pytest.mark.parametrize("dtype,e,rel", [(torch.float32, -66, 2.0 ** -17),
                                         (torch.float64, -526, 2.0 ** -22)])
@pytest.mark.parametrize("upper", [False, True])
def test_family_subnormal_scaled(family, dtype, e, rel, upper):
    for n in (5, 24, 32, 48, 64, 100):
        A = make_spd((3,), n, dtype, "cuda", cond=10.0)
        B = torch.randn(3, n, 2, dtype=dtype, device="cuda")
        As, Bs = fill_other_triangle(A * 2.0 ** (2 * e), upper), B * 2.0 ** (2 * e)
        bound = 8 * n * cond2(A) * rel
        L, _ = ops.potrf(A, upper)
        Ls, info = ops.potrf(As, upper)
        assert info.tolist() == [0, 0, 0], (n, info.tolist())
        assert_close_rel(Ls * 2.0 ** -e, L, bound, f"n = {n}, potrf")
        for k in (1, 2):
            X, _ = ops.posv_solve(A, B[..., :k], upper)
            Xs, info = ops.posv_solve(As, Bs[..., :k], upper)
            assert info.tolist() == [0, 0, 0], (n, k, info.tolist())
            assert_close_rel(Xs, X, bound, f"n = {n}, k = {k}, posv_solve")
        Xs, Ls, info = ops.posv(As, Bs[..., :1], upper)
        assert info.tolist() == [0, 0, 0], (n, info.tolist())
        assert_close_rel(Ls * 2.0 ** -e, L, bound, f"n = {n}, posv L")


@pytest.mark.parametrize("left", ["0", "1"])
@pytest.mark.parametrize("group", ["1", "3", "8"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("upper", [False, True])
def test_blocked_update_groups(monkeypatch, left, group, dtype, upper):
    # Panels per group of the blocked family's two-level update: 1 is the single-level
    # update, 3 leaves a partial group at the end of most orders here, 8 is wider than
    # the smaller matrices; a group's later panels updated by rank-32 strips or
    # left-looking (complex types: strips either way). The failing minor sits inside,
    # at the edge of and after a group, and at the last entry.
    if left == "1" and dtype.is_complex:
        pytest.skip("complex types take the strips in either mode (the left = 0 case)")
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", "blocked")
    monkeypatch.setenv("BATCHCHOL_BLOCKED_GROUP", group)
    monkeypatch.setenv("BATCHCHOL_BLOCKED_LEFT", left)
    for n, m in ((65, 40), (130, 97), (257, 193), (300, 300)):
        A = make_spd((3,), n, dtype, "cuda", cond=100.0)
        A[1, m - 1, m - 1] = -1.0
        L, info = ops.potrf(fill_other_triangle(A, upper), upper)
        assert info.tolist() == [0, m, 0], (n, m, info.tolist())
        assert_factor_ok(A[[0, 2]], L[[0, 2]], info[[0, 2]], upper)


@pytest.mark.parametrize("kernel", ["panel", "diag"])
@pytest.mark.parametrize("group", ["2", "3", "4", None])
@pytest.mark.parametrize("upper", [False, True])
def test_blocked_left_mma(monkeypatch, kernel, group, upper):
    # The float64 panel and diagonal kernels' left-looking updates on the MMAs (the
    # default) against the FMA forms (BATCHCHOL_BLOCKED_PANEL_MMA / _DIAG_MMA = 0), each
    # against torch.linalg and against each other within a few ulps of the factor (the
    # H100 gave the same bits); which form ran is checked by kernel name (the MMA
    # instance's last template argument). Orders with a partial last row chunk, a
    # partial last panel and groups that end inside the matrix; a failing minor inside a
    # group's later panel.
    if torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("the float64 MMA needs sm_80 or later")
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", "blocked")
    monkeypatch.setenv("BATCHCHOL_BLOCKED_LEFT", "1")
    monkeypatch.delenv("BATCHCHOL_BLOCKED_PANEL_MMA", raising=False)
    monkeypatch.delenv("BATCHCHOL_BLOCKED_DIAG_MMA", raising=False)
    if group is None:
        monkeypatch.delenv("BATCHCHOL_BLOCKED_GROUP", raising=False)
    else:
        monkeypatch.setenv("BATCHCHOL_BLOCKED_GROUP", group)
    switch = f"BATCHCHOL_BLOCKED_{kernel.upper()}_MMA"
    for n, m in ((97, 80), (300, 150), (385, 300), (520, 77)):
        A = make_spd((3,), n, torch.float64, "cuda", cond=100.0)
        A[1, m - 1, m - 1] = -1.0
        A_in = fill_other_triangle(A, upper)
        out = {}
        for mma in ("1", "0"):
            monkeypatch.setenv(switch, mma)
            names = cuda_kernel_names(lambda: out.__setitem__(mma, ops.potrf(A_in, upper)))
            ran = [k for k in names if f"blocked_{kernel}_kernel" in k]
            assert ran and all(k.rstrip(")").split("(")[0].endswith(
                "true>" if mma == "1" else "false>") for k in ran), ran
        (L, info), (L0, info0) = out["1"], out["0"]
        assert info.tolist() == [0, m, 0] and torch.equal(info, info0), (n, m, info.tolist())
        assert_factor_ok(A[[0, 2]], L[[0, 2]], info[[0, 2]], upper)
        bound = tol(torch.float64, n, cond2(A[[0, 2]]))
        assert_close_rel(L[[0, 2]], L0[[0, 2]], bound, "MMA vs FMA")


def _tile_smem_bytes(n, elem_size):
    """Shared memory of a tile-family block of order n (tile_stage.cuh's tile_smem_bytes:
    the packed tiles, the panel solve's tile, the chain's three column buffers; plus the
    static info word tile_fits counts)."""
    nt = (n + 31) // 32
    return ((nt * (nt + 1) // 2 + 1) * 1024 + 96) * elem_size + 16


@pytest.mark.parametrize("dtype,mma",
                         [(torch.float32, None), (torch.float64, "1"), (torch.float64, "0")])
@pytest.mark.parametrize("upper", [False, True])
def test_tile_packed_stage(monkeypatch, dtype, mma, upper):
    # At float64 97..128 the four-warp tile kernel (tile4), at float64 129..160 and float32
    # 193..224 the eight-warp one (tile) runs the packed stage (tile_packed.cuh): the panel
    # operands in the diagonal tiles' upper parts, and the last diagonal tile deferred (the
    # block's last warp reads it from memory while diagonal tile 1 is factored: A^T's
    # entries for upper, the identity past n; step 0's update in tile (0, 0)'s slot). The
    # other triangle holds NaN (the tile's upper part is read, never used). Failing minors
    # at the last tile's first row and at its last; full and partial last tiles. The other
    # families run the unpacked stage with the same steps, so all four give the same bits;
    # float64 with the MMA update and the FMA one (the deferred tile's two register
    # layouts; which ran is checked by kernel name: the third template argument, the
    # fourth being kPacked, the fifth the blocks per SM it is built for). Orders whose
    # unpacked tiles do not fit the device's shared memory (the forced families then fall
    # back to blocked) are left out.
    if mma == "1" and torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("the float64 MMA needs sm_80 or later")
    if mma is not None:
        monkeypatch.setenv("BATCHCHOL_TILE_MMA", mma)
    optin = getattr(torch.cuda.get_device_properties(0), "shared_memory_per_block_optin", 232448)
    packs = ({97: "tile4", 112: "tile4", 128: "tile4", 129: "tile", 150: "tile", 160: "tile"}
             if dtype == torch.float64 else {193: "tile", 200: "tile", 224: "tile"})
    orders = [n for n in packs if _tile_smem_bytes(n, dtype.itemsize) <= optin]
    if not orders:
        pytest.skip("the tiles of these orders do not fit this device's shared memory")
    on_mma = "true" if mma == "1" else "false"
    families = ("tile2", "tile4", "tile", "tile16")
    for n in orders:
        first = 32 * ((n - 1) // 32) + 1
        A = make_spd((4,), n, dtype, "cuda", cond=100.0)
        A[1] = break_minor(A[1], first).to(dtype)
        A[2] = break_minor(A[2], n).to(dtype)
        A_in = fill_other_triangle(A, upper, float("nan"))
        out = {}
        for family in families:
            monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", family)
            names = cuda_kernel_names(lambda: out.__setitem__(family, ops.potrf(A_in, upper)))
            ran = re.findall(r"potrf_tile_kernel<[^<>]*\b(true|false), (true|false), \d+>",
                             " ".join(names))
            assert ran == [(on_mma, "true" if family == packs[n] else "false")], (n, family, names)
        L, info = out[packs[n]]
        assert info.tolist() == [0, first, n, 0], (n, info.tolist())
        for family in families:
            L2, info2 = out[family]
            assert torch.equal(info2, info), (n, family)
            assert torch.equal(L2.nan_to_num(7.0), L.nan_to_num(7.0)), (n, family)
        assert_factor_ok(A[[0, 3]], L[[0, 3]], info[[0, 3]], upper)


@pytest.mark.parametrize("family", ["tile2", "tile4", "tile", "tile16"])
@pytest.mark.parametrize("upper", [False, True])
def test_tile_update_mma(monkeypatch, family, upper):
    # The tile families' float64 trailing updates on the MMAs (the default on sm_80+)
    # against the FMA form (BATCHCHOL_TILE_MMA=0): each against torch.linalg and against
    # each other within the factor's tolerance; which form ran is checked by kernel name
    # (the third template argument). Orders with two, four and six tile columns, partial
    # last tiles, and a failing minor inside a later diagonal tile (after one to four
    # updates). Orders whose tiles do not fit the device's shared memory (the forced
    # family then falls back to blocked: sm_8x below the H100's 227 KB) are left out.
    if torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("the float64 MMA needs sm_80 or later")
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", family)
    # sharedMemPerBlockOptin, what tile_fits compares with (the H100's when a torch
    # does not report it).
    optin = getattr(torch.cuda.get_device_properties(0), "shared_memory_per_block_optin", 232448)
    cases = [(n, m) for n, m in ((40, 35), (64, 64), (97, 80), (128, 70), (190, 150))
             if _tile_smem_bytes(n, 8) <= optin]
    for n, m in cases:
        A = make_spd((3,), n, torch.float64, "cuda", cond=100.0)
        A[1, m - 1, m - 1] = -1.0
        A_in = fill_other_triangle(A, upper)
        out = {}
        for mma in ("1", "0"):
            monkeypatch.setenv("BATCHCHOL_TILE_MMA", mma)
            names = cuda_kernel_names(lambda: out.__setitem__(mma, ops.potrf(A_in, upper)))
            # The template arguments are taken by pattern from the demangled name (its
            # namespace and parameter list around them).
            ran = re.findall(r"potrf_tile_kernel<[^<>]*\b(true|false), (?:true|false), \d+>",
                             " ".join(names))
            assert ran and set(ran) == {"true" if mma == "1" else "false"}, (n, names)
        (L, info), (L0, info0) = out["1"], out["0"]
        assert info.tolist() == [0, m, 0] and torch.equal(info, info0), (n, m, info.tolist())
        assert_factor_ok(A[[0, 2]], L[[0, 2]], info[[0, 2]], upper)
        bound = tol(torch.float64, n, cond2(A[[0, 2]]))
        assert_close_rel(L[[0, 2]], L0[[0, 2]], bound, "MMA vs FMA")


def _potrf_in_reused_memory(A_in, upper):
    """potrf with its outputs in the memory of tensors that held NaN and a nonzero info,
    so that an entry the kernels leave unwritten shows up."""
    b, n = A_in.shape[0], A_in.shape[-1]
    junk = torch.full((b, n, n), float("nan"), dtype=A_in.dtype, device="cuda")
    junk_info = torch.full((b,), 7, dtype=torch.int32, device="cuda")
    where = (junk.data_ptr(), junk_info.data_ptr())
    del junk, junk_info
    L, info = ops.potrf(A_in, upper)
    # The caching allocator hands the freed blocks back (else this tests nothing).
    assert (L.data_ptr(), info.data_ptr()) == where, n
    return L, info


@pytest.mark.parametrize("family", ["wide", "tile2", "tile4", "tile", "tile16"], indirect=True)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_family_writes_every_entry(family, dtype, upper):
    # The wide family writes its factor band by band while its steps go on, the tile
    # families tile column by tile column: every entry, the zeros of the other triangle
    # included, at orders around the bands' and tiles' edges.
    for n in (33, 50, 64, 65, 96, 100, 128, 130, 160):
        A = make_spd((5,), n, dtype, "cuda", cond=100.0)
        L, info = _potrf_in_reused_memory(fill_other_triangle(A, upper), upper)
        assert_factor_ok(A, L, info, upper)


@pytest.mark.parametrize("left", ["0", "1"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_blocked_writes_every_entry(monkeypatch, left, dtype):
    # Dense lower factors of the blocked family have no init pass: each entry's first
    # touch reads A (in left mode a group's later panels in the matrix's first group
    # too), the diagonal and panel kernels write the zeros above the diagonal and info
    # starts in the first diagonal kernel.
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", "blocked")
    monkeypatch.setenv("BATCHCHOL_BLOCKED_LEFT", left)
    for group in ("1", "2", "3", "4", None):
        if group is None:  # the table's groups (4 past n = 320, 3 for float64 strips)
            monkeypatch.delenv("BATCHCHOL_BLOCKED_GROUP")
        else:
            monkeypatch.setenv("BATCHCHOL_BLOCKED_GROUP", group)
        for n in (33, 96, 130, 257) if group else (385,):
            A = make_spd((5,), n, dtype, "cuda", cond=100.0)
            L, info = _potrf_in_reused_memory(fill_other_triangle(A, False), False)
            assert_factor_ok(A, L, info, False)


@pytest.mark.parametrize("lanes", ["8", "16"])
@pytest.mark.parametrize("max_k", ["0", "8", "64"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_warp_variants_posv(monkeypatch, lanes, max_k, dtype):
    # Both switches are read at every call: 8 or 16 lanes for n = 32 (float32 only; the
    # defaults are 16 for potrf, 8 for posv), and the largest k of the fused kernels (0:
    # always potrf + potrs).
    monkeypatch.setenv("BATCHCHOL_WARP_P32", lanes)
    monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", max_k)
    # unrolled (<= 32; padded orders 20, 28 and 32), run-time loop (float32 > 32; float64
    # potrf to 48), the wide kernel's fused posv (float64 > 32)
    for n in (20, 26, 29, 32, 33, 47, 64):
        for k in (1, 5, 17):
            A = make_spd((4,), n, dtype, "cuda", cond=100.0)
            B = make_rhs((4, n, k), dtype, "cuda")
            for upper in (False, True):
                X, L, info = ops.posv(fill_other_triangle(A, upper), B, upper)
                Xs, info_s = ops.posv_solve(fill_other_triangle(A, upper), B, upper)
                assert bool((info == 0).all()) and bool((info_s == 0).all())
                ref = torch.linalg.solve(to_ref(A), to_ref(B))
                bound = tol(dtype, n, cond2(A))
                assert_close_rel(X, ref, bound, f"posv n={n} k={k}")
                assert_close_rel(Xs, ref, bound, f"posv_solve n={n} k={k}")
                assert_close_rel(reconstruct(L, upper), to_ref(A), tol(dtype, n), "posv L")


@pytest.mark.parametrize("n", [33, 48, 64])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("upper", [False, True])
def test_fused_posv_past_32_failures_are_per_system(monkeypatch, n, dtype, upper):
    # Past n = 32 (with the switch at 8: the fused warp64 posv for float32, the fused
    # wide one for float64): a failing minor or a NaN
    # flags its own system only; every other system is solved, with the factor written
    # (posv) or not (posv_solve).
    monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "8")
    A = make_spd((6,), n, dtype, "cuda", cond=100.0)
    A[1] = break_minor(A[1], n - 3).to(dtype)
    A[4, 40 % n, 40 % n] = float("nan")
    expect = [0, n - 3, 0, 0, 40 % n + 1, 0]
    good = [0, 2, 3, 5]
    for k in (1, 3):
        B = make_rhs((6, n, k), dtype, "cuda")
        X, L, info = ops.posv(fill_other_triangle(A, upper), B, upper)
        Xs, info_s = ops.posv_solve(fill_other_triangle(A, upper), B, upper)
        assert info.tolist() == expect and info_s.tolist() == expect
        ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
        bound = tol(dtype, n, cond2(A[good]))
        assert_close_rel(X[good], ref, bound, f"posv n={n} k={k}")
        assert_close_rel(Xs[good], ref, bound, f"posv_solve n={n} k={k}")
        assert_close_rel(reconstruct(L[good], upper), to_ref(A[good]), tol(dtype, n), "posv L")


def _fused_posv_batch(dtype, n, upper):
    """Eight systems of order n for the fused posv tests: failing minors at rows 1, 32,
    33 and n (systems 1, 3, 4, 6), NaN in the other triangle; returns A, the input A_in,
    the failures {system: info}, the good systems, the expected infos and potrf's L."""
    fails = {1: 1, 3: 32, 4: 33, 6: n}
    good = [0, 2, 5, 7]
    A = make_spd((8,), n, dtype, "cuda", cond=100.0)
    for s, m in fails.items():
        A[s] = break_minor(A[s], m).to(dtype)
    A_in = fill_other_triangle(A, upper, float("nan"))
    L_ref, info_ref = ops.potrf(A_in, upper)
    expect = [fails.get(s, 0) for s in range(8)]
    assert info_ref.tolist() == expect
    return A, A_in, fails, good, expect, L_ref


@pytest.mark.parametrize("dtype,n", [(torch.float64, n) for n in (33, 47, 63, 64)]
                         + [(torch.float32, n) for n in (40, 64)])
@pytest.mark.parametrize("upper", [False, True])
def test_wide_fused_posv(monkeypatch, dtype, n, upper):
    # Where potrf runs the two-warp wide kernel (forced here: float64 up to 64, float32),
    # posv fuses its solve into it (switch at 4096): against potrf + potrs (switch at 0)
    # and torch. Failing minors in the first warp's rows, at the warps' boundary and at
    # the last row give their info and a NaN X; the factor that posv returns is potrf's
    # bit for bit (same steps, same copy-out); X is the same with and without L. The
    # other triangle holds NaN (never read).
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", "wide")
    A, A_in, fails, good, expect, L_ref = _fused_posv_batch(dtype, n, upper)
    for k in (1, 2, 5):
        B = make_rhs((8, n, k), dtype, "cuda")
        monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "4096")
        X, L, info = ops.posv(A_in, B, upper)
        Xs, info_s = ops.posv_solve(A_in, B, upper)
        _assert_one_kernel(lambda: ops.posv_solve(A_in, B, upper), "posv_wide_kernel")
        monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "0")
        X0, _, info0 = ops.posv(A_in, B, upper)
        names = cuda_kernel_names(lambda: ops.posv(A_in, B, upper))
        assert not any("posv_wide" in name for name in names), names
        assert info.tolist() == expect and info_s.tolist() == expect and info0.tolist() == expect
        assert torch.equal(L.nan_to_num(7.0), L_ref.nan_to_num(7.0))
        assert torch.equal(X.nan_to_num(7.0), Xs.nan_to_num(7.0))
        ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
        bound = tol(dtype, n, cond2(A[good]))
        assert_close_rel(X[good], ref, bound, f"fused posv n={n} k={k}")
        assert_close_rel(X0[good], ref, bound, f"potrf + potrs n={n} k={k}")
        for s in fails:
            assert bool(torch.isnan(X[s]).all()), f"failed system {s}: X not all NaN"
            assert not bool(torch.isfinite(X0[s]).all()), f"failed system {s}: finite X (unfused)"


@pytest.mark.parametrize("n", [33, 40, 41, 48, 49, 60, 64])
@pytest.mark.parametrize("upper", [False, True])
def test_posv_fused_on_wide_past_32(monkeypatch, n, upper):
    # The size dispatch gives float64 potrf the warp64 kernel up to 48 and tile2
    # (two-warp blocks) from 49; posv keeps its fused wide kernel up to 64 either way
    # (the warp64 and tile posv kernels lost to it there), so its L is another
    # algorithm's, within the factor's tolerance; with wide forced on potrf too, potrf's
    # bit for bit.
    for switch in ("BATCHCHOL_POSV_FUSED_MAX_K", "BATCHCHOL_POTRF_KERNEL"):
        monkeypatch.delenv(switch, raising=False)
    A = make_spd((6,), n, torch.float64, "cuda", cond=100.0)
    A_in = fill_other_triangle(A, upper, float("nan"))
    B = make_rhs((6, n, 1), torch.float64, "cuda")
    names = cuda_kernel_names(lambda: ops.potrf(A_in, upper))
    expected = "potrf_warp64_kernel<double," if n <= 48 else "potrf_tile_kernel<double, 64,"
    assert any(expected in k for k in names), names
    L_ref, _ = ops.potrf(A_in, upper)
    _assert_one_kernel(lambda: ops.posv(A_in, B, upper), "posv_wide_kernel")
    X, L, info = ops.posv(A_in, B, upper)
    assert bool((info == 0).all())
    bound = tol(torch.float64, n, cond2(A))
    assert_close_rel(X, torch.linalg.solve(to_ref(A), to_ref(B)), bound, "X")
    assert_close_rel(L, L_ref, bound, "posv L vs potrf L")
    monkeypatch.setenv("BATCHCHOL_POTRF_KERNEL", "wide")
    L_wide, _ = ops.potrf(A_in, upper)
    _assert_one_kernel(lambda: ops.posv(A_in, B, upper), "posv_wide_kernel")
    assert torch.equal(ops.posv(A_in, B, upper)[1], L_wide)


@pytest.mark.parametrize("dtype,n", [(torch.float64, n) for n in (33, 36, 40, 41, 47, 48)]
                         + [(torch.float32, n) for n in (33, 40, 41, 48, 49, 64)])
@pytest.mark.parametrize("upper", [False, True])
def test_warp64_widths(monkeypatch, dtype, n, upper):
    # The float32 warp64 kernel for order n holds rows of the order rounded up to 40, 48
    # or 64 (float64: 48 throughout): the widths only cut scratch entries past n, so the
    # widest kernel (BATCHCHOL_WARP64_FULL) gives the same bits. 11 matrices leave the
    # last block partly empty where blocks hold several warps (float32 33..41); one
    # matrix has a failing minor at n - 1 (a lane's second row past n = 33), one a NaN,
    # and the other triangle holds NaN (never read).
    for switch in ("BATCHCHOL_POTRF_KERNEL", "BATCHCHOL_WARP64_FULL"):
        monkeypatch.delenv(switch, raising=False)
    A = make_spd((11,), n, dtype, "cuda", cond=100.0)
    A[4] = break_minor(A[4], n - 1).to(dtype)
    A[9, n - 1, n - 1] = float("nan")
    A_in = fill_other_triangle(A, upper, float("nan"))
    width = 48 if dtype == torch.float64 else 40 if n <= 40 else 48 if n <= 48 else 64
    names = cuda_kernel_names(lambda: ops.potrf(A_in, upper))
    kernel = f"potrf_warp64_kernel<{'double' if dtype == torch.float64 else 'float'}, {width},"
    assert any(kernel in k for k in names), names
    L, info = ops.potrf(A_in, upper)
    assert info[4] == n - 1 and info[9] == n
    good = [i for i in range(11) if i not in (4, 9)]
    assert_factor_ok(A[good], L[good], info[good], upper)
    if width == 64 or dtype == torch.float64:
        return  # the widest kernel already
    monkeypatch.setenv("BATCHCHOL_WARP64_FULL", "1")
    assert any("potrf_warp64_kernel<float, 64," in k
               for k in cuda_kernel_names(lambda: ops.potrf(A_in, upper)))
    L_full, info_full = ops.potrf(A_in, upper)
    assert torch.equal(info, info_full)
    assert torch.equal(L.nan_to_num(7.0), L_full.nan_to_num(7.0))


TILE_POSV = ([(torch.float64, n, {}) for n in (65, 96)]
             + [(torch.float64, n, {"BATCHCHOL_POTRF_KERNEL": "tile"}) for n in (97, 128)]
             + [(torch.float64, 100, {"BATCHCHOL_TILE_MMA": "0"})]
             + [(torch.float64, n, {"BATCHCHOL_POTRF_KERNEL": "tile4"}) for n in (40, 64)]
             + [(torch.float32, n, {}) for n in (65, 96, 97, 160, 161, 192)])


@pytest.mark.parametrize("dtype,n,env", TILE_POSV, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_tile_fused_posv(monkeypatch, dtype, n, env, upper):
    # Where potrf runs tile4 or tile on the unpacked stage (float64 65..96, 97..128 with
    # tile forced or the FMA update, float32 65..192, whose three tile columns run a build
    # of their own, tile_posv_min_blocks; float64 40 and 64 with tile4 forced: two tile
    # columns; float64 97..128's default, packed tile4, is test_tile4_builds'), posv_solve with up
    # to two right-hand sides (float32: four) is one tile posv kernel, and so is posv
    # (which returns L) with one in float32; elsewhere posv keeps potrf + potrs unless the
    # switch allows the fused kernel. The fused posv's factor is potrf's bit for bit and
    # its X posv_solve's. X agrees with torch. Failing minors at a tile column's first and
    # last rows and at the last row give their info and an all-NaN X; the other triangle
    # holds NaN (never read). More columns (three in float64, nine in both), or the fused
    # kernels switched off, run potrf + potrs; nine with the switch at 4096 run the fused
    # kernel, more columns than warps.
    for switch in ("BATCHCHOL_POSV_FUSED_MAX_K", "BATCHCHOL_POTRF_KERNEL"):
        monkeypatch.delenv(switch, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    nt, many = (n + 31) // 32, 9
    optin = getattr(torch.cuda.get_device_properties(0), "shared_memory_per_block_optin", 232448)
    if _tile_smem_bytes(n, dtype.itemsize) + 32 * nt * many * dtype.itemsize > optin:
        pytest.skip("the tiles of this order do not fit this device's shared memory")
    A, A_in, fails, good, expect, L_ref = _fused_posv_batch(dtype, n, upper)
    bound = tol(dtype, n, cond2(A[good]))

    def not_tile(fn):
        names = cuda_kernel_names(fn)
        assert not any("posv_tile" in name for name in names), names

    solve_max_k = 4 if dtype == torch.float32 else 2
    for k in (1, 2, 3, many):
        B = make_rhs((8, n, k), dtype, "cuda")
        ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
        X0, _, info0 = ops.posv(A_in, B, upper)
        Xs, info_s = ops.posv_solve(A_in, B, upper)
        assert info0.tolist() == expect and info_s.tolist() == expect
        assert_close_rel(X0[good], ref, bound, f"posv n={n} k={k}")
        assert_close_rel(Xs[good], ref, bound, f"posv_solve n={n} k={k}")
        if dtype == torch.float32 and k == 1:
            _assert_one_kernel(lambda: ops.posv(A_in, B, upper), "posv_tile_kernel")
        else:
            not_tile(lambda: ops.posv(A_in, B, upper))
        if k > solve_max_k:
            not_tile(lambda: ops.posv_solve(A_in, B, upper))
            if k != many:
                continue
        if k == many:
            monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "4096")
            Xs, info_s = ops.posv_solve(A_in, B, upper)
            assert info_s.tolist() == expect
            assert_close_rel(Xs[good], ref, bound, f"fused posv_solve n={n} k={k}")
        _assert_one_kernel(lambda: ops.posv_solve(A_in, B, upper), "posv_tile_kernel")
        for s in fails:
            assert bool(torch.isnan(Xs[s]).all()), f"failed system {s}: X not all NaN"
        monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", str(k))
        _assert_one_kernel(lambda: ops.posv(A_in, B, upper), "posv_tile_kernel")
        X, L, info = ops.posv(A_in, B, upper)
        monkeypatch.delenv("BATCHCHOL_POSV_FUSED_MAX_K")
        assert info.tolist() == expect
        assert torch.equal(L.nan_to_num(7.0), L_ref.nan_to_num(7.0))
        assert torch.equal(X.nan_to_num(7.0), Xs.nan_to_num(7.0))
    monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "0")
    not_tile(lambda: ops.posv_solve(A_in, B[..., :1], upper))


@pytest.mark.parametrize("dtype,n,mma,potrf_build,posv_build", [
    (torch.float32, 65, None, "float, 128, false, false, 7", "float, 128, false, 7"),
    (torch.float32, 96, None, "float, 128, false, false, 7", "float, 128, false, 7"),
    (torch.float32, 97, None, "float, 128, false, false, 7", "float, 128, false, 4"),
    (torch.float32, 128, None, "float, 128, false, false, 7", "float, 128, false, 4"),
    (torch.float32, 129, None, "float, 128, false, false, 4", "float, 128, false, 4"),
    (torch.float32, 160, None, "float, 128, false, false, 4", "float, 128, false, 4"),
    (torch.float64, 96, "1", "double, 128, true, false, 4", "double, 128, true, 4"),
    (torch.float64, 97, "1", "double, 128, true, true, 3", None),
    (torch.float64, 128, "1", "double, 128, true, true, 3", None),
    (torch.float64, 128, "0", "double, 256, false, false, 2", "double, 256, false, 2")],
    ids=str)
def test_tile4_builds(monkeypatch, dtype, n, mma, potrf_build, posv_build):
    # The four-warp tile blocks' builds (tile_min_blocks, tile_posv_min_blocks): float32 on
    # the unpacked stage built for seven blocks per SM (72 registers) up to four tile
    # columns in potrf and three in the fused posv, else for four; float64 97..128 with
    # the MMA update on the packed stage built for three (168 registers), where posv_solve
    # runs potrf + potrs (posv_build None: the fused posv has no packed form, and lost to
    # them, posv_tile_warps); with the FMA update (BATCHCHOL_TILE_MMA=0) both keep
    # eight-warp unpacked blocks (tile_fixed_warps). The build each order runs by default
    # (float32 65..96 on tile4 since the forty-seventh round, float64 97..128 since the
    # forty-eighth), and its results against torch (the forced-family tests run the same
    # builds at more orders).
    for switch in ("BATCHCHOL_POSV_FUSED_MAX_K", "BATCHCHOL_POTRF_KERNEL", "BATCHCHOL_TILE_MMA"):
        monkeypatch.delenv(switch, raising=False)
    if mma == "1" and torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("the float64 MMA needs sm_80 or later")
    if mma is not None:
        monkeypatch.setenv("BATCHCHOL_TILE_MMA", mma)
    optin = getattr(torch.cuda.get_device_properties(0), "shared_memory_per_block_optin", 232448)
    size = dtype.itemsize
    if _tile_smem_bytes(n, size) + 32 * ((n + 31) // 32) * size > optin:
        pytest.skip("the tiles of this order do not fit this device's shared memory")
    A = make_spd((5,), n, dtype, "cuda", cond=100.0)
    A[2] = break_minor(A[2], n - 3).to(dtype)
    good = [0, 1, 3, 4]
    for upper in (False, True):
        A_in = fill_other_triangle(A, upper, float("nan"))
        names = cuda_kernel_names(lambda: ops.potrf(A_in, upper))
        assert len(names) == 1 and f"potrf_tile_kernel<{potrf_build}>" in names[0], names
        L, info = ops.potrf(A_in, upper)
        assert info.tolist() == [0, 0, n - 3, 0, 0]
        assert_factor_ok(A[good], L[good], info[good], upper)
        B = make_rhs((5, n, 1), dtype, "cuda")
        names = cuda_kernel_names(lambda: ops.posv_solve(A_in, B, upper))
        if posv_build is None:
            assert any(f"potrf_tile_kernel<{potrf_build}>" in k for k in names), names
            assert not any("posv_tile_kernel" in k for k in names), names
        else:
            assert len(names) == 1 and f"posv_tile_kernel<{posv_build}>" in names[0], names
        X, info = ops.posv_solve(A_in, B, upper)
        assert info.tolist() == [0, 0, n - 3, 0, 0]
        ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
        assert_close_rel(X[good], ref, tol(dtype, n, cond2(A[good])), f"n={n}")


def _assert_one_kernel(fn, family):
    # fn() launched exactly one kernel, of `family` (a fallback to potrf + potrs would
    # give the right X as well).
    names = cuda_kernel_names(fn)
    assert len(names) == 1 and family in names[0], names


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [9, 16, 22, 27, 32])
@pytest.mark.parametrize("upper", [False, True])
def test_warp_fused_posv(monkeypatch, dtype, n, upper):
    # Up to 4 right-hand sides posv and posv_solve run the warp family's one fused kernel
    # (the first column forward-substituted during the factorization, the other sweeps
    # on the staged factor); past 4, potrf + potrs. X agrees with torch at every k, and
    # with and without L bit for bit; posv's L is potrf's bit for bit (same steps; float32
    # n = 32 and float64 n = 17..24 on 8 lanes against potrf's 16). 37 systems leave the
    # last block partly empty; one has a failing minor (its info, the others unaffected).
    # The tables, not the tuning switches, decide here.
    for switch in ("BATCHCHOL_POSV_FUSED_MAX_K", "BATCHCHOL_WARP_P32", "BATCHCHOL_POTRF_KERNEL"):
        monkeypatch.delenv(switch, raising=False)
    A = make_spd((37,), n, dtype, "cuda", cond=100.0)
    A[5] = break_minor(A[5], n // 2 + 1).to(dtype)
    good = [s for s in range(37) if s != 5]
    A_in = fill_other_triangle(A, upper, float("nan"))
    L_ref, info_ref = ops.potrf(A_in, upper)
    expect = [n // 2 + 1 if s == 5 else 0 for s in range(37)]
    assert info_ref.tolist() == expect
    for k in (1, 3, 4, 5):
        B = make_rhs((37, n, k), dtype, "cuda")
        X, L, info = ops.posv(A_in, B, upper)
        Xs, info_s = ops.posv_solve(A_in, B, upper)
        assert info.tolist() == expect and info_s.tolist() == expect
        ref = torch.linalg.solve(to_ref(A[good]), to_ref(B[good]))
        bound = tol(dtype, n, cond2(A[good]))
        assert_close_rel(X[good], ref, bound, f"posv n={n} k={k}")
        assert_close_rel(Xs[good], ref, bound, f"posv_solve n={n} k={k}")
        assert torch.equal(L[good], L_ref[good])
        if k <= 4:
            assert torch.equal(X[good], Xs[good])
            _assert_one_kernel(lambda: ops.posv_solve(A_in, B, upper), "posv_warp_kernel")
            _assert_one_kernel(lambda: ops.posv(A_in, B, upper), "posv_warp_kernel")
        else:
            names = cuda_kernel_names(lambda: ops.posv_solve(A_in, B, upper))
            assert not any("posv_warp_kernel" in name for name in names), names


def _misaligned_copy(A):
    # The same values one element into a fresh buffer: contiguous, but not 16-byte
    # aligned, so the staged kernels split their copies (stage_copy.cuh) and take the
    # square stage.
    flat = torch.empty(A.numel() + 1, dtype=A.dtype, device=A.device)
    out = flat[1:].view(A.shape)
    out.copy_(A)
    assert out.data_ptr() % 16 != 0
    return out


@pytest.mark.parametrize(
    "dtype,n",
    [(torch.float64, n) for n in (26, 28, 30, 31, 32)] + [(torch.float32, n) for n in (62, 64)],
)
@pytest.mark.parametrize("upper", [False, True])
def test_packed_and_square_stages_agree(monkeypatch, dtype, n, upper):
    # The warp potrf stages float64 orders 25..32 and the warp64 kernels float32 n = 64
    # as a packed triangle when the copies can be 16-byte ones, the square stage
    # otherwise; the arithmetic is the same, so the factors agree bit for bit. 35
    # matrices leave the last block partly empty; one has a failing minor, one a NaN,
    # and the other triangle holds NaN (it must never be read).
    A = make_spd((35,), n, dtype, "cuda", cond=100.0)
    A[7] = break_minor(A[7], n // 2).to(dtype)
    A[20, n - 1, n - 1] = float("nan")
    A_in = fill_other_triangle(A, upper, float("nan"))
    L, info = ops.potrf(A_in, upper)
    L2, info2 = ops.potrf(_misaligned_copy(A_in), upper)
    assert torch.equal(info, info2) and info[7] == n // 2 and info[20] == n
    assert torch.equal(L.nan_to_num(7.0), L2.nan_to_num(7.0))
    good = [i for i in range(35) if i not in (7, 20)]
    assert_factor_ok(A[good], L[good], info[good], upper)
    if dtype == torch.float32:  # the fused warp64 posv at n = 64
        monkeypatch.setenv("BATCHCHOL_POSV_FUSED_MAX_K", "8")
        B = make_rhs((35, n, 2), dtype, "cuda")
        X, info3 = ops.posv_solve(A_in, B, upper)
        X2, info4 = ops.posv_solve(_misaligned_copy(A_in), B, upper)
        assert torch.equal(info3, info4) and torch.equal(X[good], X2[good])
