"""Small workload of every op over sizes and dtypes, for compute-sanitizer runs.

    compute-sanitizer --tool memcheck python tools/sanitize_ops.py
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --quick
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --blocked-only --quick
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --panel-only --quick
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --warp-mma-only
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --listed-only --quick
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --tile-only
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --warp64-only
    compute-sanitizer --tool racecheck python tools/sanitize_ops.py --staging-only
"""

import argparse

import torch

import torch_batchchol as tb


def random_spd(batch, n, dtype, device="cuda"):
    """[*batch, n, n] Hermitian positive definite: X X^H + n I with X standard normal."""
    X = torch.randn(*batch, n, n, dtype=dtype, device=device)
    return X @ X.mH + n * torch.eye(n, dtype=dtype, device=device)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ragged-only", action="store_true", help="only the vbatched ops")
    ap.add_argument("--wide-posv-only", action="store_true", help="only wide_posv_workload")
    ap.add_argument("--warp-posv-only", action="store_true", help="only warp_posv_workload")
    ap.add_argument("--blocked-only", action="store_true",
                    help="only blocked_workload (with --quick: float32 / float64, n = 130, 300)")
    ap.add_argument("--warp-mma-only", action="store_true",
                    help="only warp_mma_workload")
    ap.add_argument("--panel-only", action="store_true",
                    help="only panel_workload (with --quick: float64 only)")
    ap.add_argument("--listed-only", action="store_true", help="only listed_workload")
    ap.add_argument("--tile-only", action="store_true", help="only tile_workload")
    ap.add_argument("--warp64-only", action="store_true", help="only warp64_workload")
    ap.add_argument("--staging-only", action="store_true", help="only staging_workload")
    args = ap.parse_args()
    ops = torch.ops.batchchol
    sizes = [1, 3, 4, 8, 16, 17, 32, 33, 48, 64, 65, 100, 128, 200, 300] if not args.quick else [3, 17, 32, 40, 64, 100, 200]
    dtypes = [torch.float32, torch.float64, torch.complex64, torch.complex128]
    if args.quick:
        dtypes = [torch.float32, torch.complex128]
    if args.ragged_only:
        ragged_workload(dtypes, args.quick)
        print("sanitize workload done")
        return
    if args.wide_posv_only:
        wide_posv_workload()
        print("sanitize workload done")
        return
    if args.warp_posv_only:
        warp_posv_workload()
        print("sanitize workload done")
        return
    if args.blocked_only:
        blocked_workload(args.quick)
        print("sanitize workload done")
        return
    if args.panel_only:
        panel_workload(args.quick)
        print("sanitize workload done")
        return
    if args.warp_mma_only:
        warp_mma_workload()
        print("sanitize workload done")
        return
    if args.listed_only:
        listed_workload(args.quick)
        print("sanitize workload done")
        return
    if args.tile_only:
        tile_workload()
        print("sanitize workload done")
        return
    if args.warp64_only:
        warp64_workload()
        print("sanitize workload done")
        return
    if args.staging_only:
        staging_workload()
        print("sanitize workload done")
        return
    for dtype in dtypes:
        for n in sizes:
            A = random_spd((3,), n, dtype)
            B = torch.randn(3, n, 5, dtype=dtype, device="cuda")
            for upper in (False, True):
                L, info = ops.potrf(A, upper)
                ops.potrs(L, B, upper)
                ops.posv(A, B, upper)
                ops.posv(A, B[..., :1], upper)
                ops.posv_solve(A, B[..., :1], upper)
                ops.posv_solve(A, B, upper)
                ops.trsm(L, B, upper, True, False, False)
                ops.trsm(L, B.mT.contiguous(), upper, False, True, True)
            torch.cuda.synchronize()
    families_workload(dtypes)
    solve_kernels_workload(dtypes, args.quick)
    one_column_stage_workload()
    panel_workload(args.quick)
    warp_mma_workload()
    wide_posv_workload()
    warp_posv_workload()
    warp64_workload()
    staging_workload()
    ragged_workload(dtypes, args.quick)
    listed_workload(args.quick)
    print("sanitize workload done")


def fused_posv_cases(dtype_sizes, batch, k):
    """posv and posv_solve with k and 1 columns, with and without L, both triangles, and
    posv_solve with none (potrf alone), for each (dtype, sizes); system batch - 2 has a
    failing minor."""
    ops = torch.ops.batchchol
    for dtype, sizes in dtype_sizes:
        for n in sizes:
            A = random_spd((batch,), n, dtype)
            A[batch - 2, n // 2, n // 2] = -1.0
            B = torch.randn(batch, n, k, dtype=dtype, device="cuda")
            for upper in (False, True):
                ops.posv(A, B, upper)
                ops.posv(A, B[..., :1], upper)
                ops.posv_solve(A, B[..., :1], upper)
                ops.posv_solve(A, B, upper)
                ops.posv_solve(A, B[..., :0], upper)
        torch.cuda.synchronize()


def wide_posv_workload():
    """The wide family's fused posv (float64 33..64; float32 there with the wide potrf
    forced) with the switch forcing it for 5 columns too."""
    import os

    os.environ["BATCHCHOL_POSV_FUSED_MAX_K"] = "4096"
    os.environ["BATCHCHOL_POTRF_KERNEL"] = "wide"
    fused_posv_cases(((torch.float64, (33, 50, 64)), (torch.float32, (40, 64))), 4, 5)
    os.environ.pop("BATCHCHOL_POSV_FUSED_MAX_K")
    os.environ.pop("BATCHCHOL_POTRF_KERNEL")


def warp_posv_workload():
    """The warp family's fused posv (the first column's forward substitution inside the
    factorization, the other sweeps reading the staged factor) at the orders of its
    largest lane groups, padded and exact, with batches that leave the last block's
    groups partly empty, and at small orders."""
    fused_posv_cases(((torch.float64, (3, 8, 12, 16, 20, 22, 24, 25, 28, 30, 31, 32)),
                      (torch.float32, (3, 8, 12, 16, 24, 27, 32))), 5, 3)


def warp64_workload():
    """The one-warp kernels past n = 32 at each of their widths (float32 40, 48, 64, and
    the widest forced; float64 48), potrf and the float32 fused posv (five columns with
    the switch; float64 posv runs wide's), batches that leave the last block partly
    empty, a failing minor (fused_posv_cases; its posv_solve with no column is potrf)."""
    import os

    os.environ["BATCHCHOL_POSV_FUSED_MAX_K"] = "4096"
    fused_posv_cases(((torch.float64, (33, 40, 41, 48)),), 5, 5)
    for full in (None, "1"):
        if full:
            os.environ["BATCHCHOL_WARP64_FULL"] = full
        fused_posv_cases(((torch.float32, (36, 40, 41, 48, 49, 64)),), 5, 5)
    os.environ.pop("BATCHCHOL_WARP64_FULL")
    os.environ.pop("BATCHCHOL_POSV_FUSED_MAX_K")


def shifted_cases(dtype_sizes, shifts):
    """potrf, posv (two columns) and posv_solve (one) of both triangles on inputs `shift`
    elements past a 16-byte boundary, for each shift and (dtype, sizes); batches that
    leave several blocks of the small orders' kernels, the last partly empty."""
    ops = torch.ops.batchchol
    for dtype, sizes in dtype_sizes:
        for n in sizes:
            batch = 301 if n <= 16 else 37
            A = random_spd((batch,), n, dtype)
            B = torch.randn(batch, n, 2, dtype=dtype, device="cuda")
            for shift in shifts(A.element_size()):
                flat = torch.empty(A.numel() + 16, dtype=dtype, device="cuda")
                A_s = flat[shift: shift + A.numel()].view(A.shape)
                A_s.copy_(A)
                for upper in (False, True):
                    ops.potrf(A_s, upper)
                    ops.posv(A_s, B, upper)
                    ops.posv_solve(A_s, B[..., :1], upper)
        torch.cuda.synchronize()


def staging_workload():
    """The staging copies split at 16-byte boundaries (stage_copy.cuh): odd and even
    orders of the warp and warp64 kernels (potrf and their fused posv) with inputs 0..V-1
    elements past a boundary; and the wide kernels forced (their own copies,
    wide_stage.cuh), aligned and one element past."""
    import os

    os.environ["BATCHCHOL_POSV_FUSED_MAX_K"] = "4"
    every_shift = lambda size: range(16 // size)  # noqa: E731
    shifted_cases(((torch.float32, (3, 6, 7, 13, 31, 37, 47, 63)),
                   (torch.float64, (3, 7, 13, 31, 33, 45))), every_shift)
    os.environ["BATCHCHOL_POTRF_KERNEL"] = "wide"
    shifted_cases(((torch.float32, (33, 48, 65, 71, 80, 97, 112)),
                   (torch.float64, (33, 41, 48, 63))), lambda size: (0, 1))
    for switch in ("BATCHCHOL_POTRF_KERNEL", "BATCHCHOL_POSV_FUSED_MAX_K"):
        os.environ.pop(switch)


def one_column_stage_workload():
    """The column-per-lane solves' one-column path at order 16 (B and X staged in shared
    memory), orders 9..16, both dtypes, both triangles and transposes, unit diagonal,
    with enough systems that warps make a second trip."""
    ops = torch.ops.batchchol
    for dtype in (torch.float64, torch.float32):
        big = 20_000 if dtype == torch.float64 else 36_000
        for n, batch in ((9, 300), (13, 300), (16, 300), (16, big)):
            eye = torch.eye(n, dtype=dtype, device="cuda")
            L = torch.randn(batch, n, n, dtype=dtype, device="cuda") * 0.1 + eye * 2
            B = torch.randn(batch, n, 1, dtype=dtype, device="cuda")
            for upper in (False, True):
                ops.potrs(L, B, upper)
                for trans in (False, True):
                    ops.trsm(L, B, upper, True, trans, False)
            ops.trsm(L, B, False, True, False, True)
        torch.cuda.synchronize()


def lower_triangle(batch, n, dtype):
    """Well-conditioned lower triangular factors: small entries, diagonal about 2."""
    L = torch.randn(batch, n, n, dtype=dtype, device="cuda").tril_() * (0.5 / n)
    L.diagonal(dim1=-2, dim2=-1).add_(2)
    return L


def solve_both_triangles(L, B):
    """potrs, a left trsm and a right transposed unit trsm with the lower factor L and with
    its upper transpose (a column-major view)."""
    ops = torch.ops.batchchol
    for upper in (False, True):
        T = L.mH if upper else L
        ops.potrs(T, B, upper)
        ops.trsm(T, B, upper, True, False, False)
        ops.trsm(T, B.mT, upper, False, True, True)


def solve_kernels_workload(dtypes, quick):
    """Every trsm/potrs kernel family forced (BATCHCHOL_TRSM_KERNEL), with more systems
    than the persistent kernels' resident warps so that every warp runs several systems
    (the streaming kernels' copy pipeline then spans systems), and column-major factors
    read in place. The column-per-lane (real, n <= 32) and block-per-system (real, n <= 128)
    families also get 40 columns (several column groups per system)."""
    import os

    max_n = {"cols": 32, "block": 128}
    for fam in ("stream", "warp", "cols", "block"):
        os.environ["BATCHCHOL_TRSM_KERNEL"] = fam
        cases = ((3, 40000), (12, 9000), (33, 300), (70, 50), (128, 20))
        for dtype in dtypes[:1] if quick else dtypes:  # racecheck is slow: one dtype
            for n, batch in ((3, 16000), (12, 3500), (33, 20), (70, 4)) if quick else cases:
                L = lower_triangle(batch, n, dtype)
                k = 40 if n <= max_n.get(fam, 0) else 3
                solve_both_triangles(L, torch.randn(batch, n, k, dtype=dtype, device="cuda"))
        torch.cuda.synchronize()
    os.environ.pop("BATCHCHOL_TRSM_KERNEL")


def panel_workload(quick):
    """The panel solves (trsm_panel_*) forced at orders with one, several and partial row
    blocks, both block sizes and column groups of 1 to 16 (k = 1, 5, 20), every flag
    family (lower / upper, left / right, column-major factors); then their default use (a
    few systems past n = 128) and the warp-per-system kernels' cp.async tiles (float64)."""
    import os

    dtypes = [torch.float64] if quick else [torch.float32, torch.float64]
    for dtype in dtypes:
        for env in ({"BATCHCHOL_TRSM_KERNEL": "panel", "BATCHCHOL_PANEL_WARPS": "4"},
                    {"BATCHCHOL_TRSM_KERNEL": "panel", "BATCHCHOL_PANEL_WARPS": "8"},
                    {"BATCHCHOL_TRSM_KERNEL": "warp"}, {}):
            os.environ.update(env)
            for n, batch in ((5, 3), (40, 3), (130, 3), (300, 2)):
                L = lower_triangle(batch, n, dtype)
                for k in (1, 5) if quick else (1, 5, 20):
                    solve_both_triangles(L, torch.randn(batch, n, k, dtype=dtype, device="cuda"))
            torch.cuda.synchronize()
            for key in env:
                os.environ.pop(key)


def warp_mma_workload():
    """The warp-per-system solves with column groups of 8 and 16 (k = 8, 16, 24): float64
    products on the MMAs and on the FMA loop (BATCHCHOL_TRSM_MMA), solved rows staged by
    16-byte chunks (contiguous groups; right-hand sides in and solved rows out likewise)
    and by lanes (right solves, partial groups); and the ragged solves' MMA kernels
    (float64, sizes to 150, tightly packed blocks)."""
    import os

    from torch_batchchol import ragged

    os.environ["BATCHCHOL_TRSM_KERNEL"] = "warp"
    ops = torch.ops.batchchol
    for mma in ("1", "0"):
        os.environ["BATCHCHOL_TRSM_MMA"] = mma
        for dtype in (torch.float32, torch.float64):
            for n, batch in ((40, 3), (130, 2)):
                L = lower_triangle(batch, n, dtype)
                for k in (8, 16, 24):
                    solve_both_triangles(L, torch.randn(batch, n, k, dtype=dtype, device="cuda"))
        sizes = [150, 5, 33, 1, 97, 64, 129]
        r = ragged.pack([lower_triangle(1, s, torch.float64)[0] for s in sizes])
        for k in (8, 16, 24):
            b, bo, _ = ragged.pack_rhs(
                [torch.randn(s, k, dtype=torch.float64, device="cuda") for s in sizes], r.n)
            n, off, bo = r.n.cuda(), r.offsets.cuda(), bo.cuda()
            for upper in (False, True):
                ops.potrs_vbatched(r.values, n, off, b, bo, k, 150, upper)
                ops.trsm_vbatched(r.values, n, off, b, bo, k, 150, upper, True, False, False)
                ops.trsm_vbatched(r.values, n, off, b, bo, k, 150, upper, False, True, False)
        torch.cuda.synchronize()
    for key in ("BATCHCHOL_TRSM_KERNEL", "BATCHCHOL_TRSM_MMA"):
        os.environ.pop(key)


def families_workload(dtypes):
    """The potrf families that the size dispatch does not pick, forced (the library reads
    BATCHCHOL_POTRF_KERNEL at every call)."""
    import os

    ops = torch.ops.batchchol
    families = ("left", "left-split", "warp", "registers", "wide", "tile2", "tile4", "tile",
                "tile16", "shared", "blocked")
    for fam in families:
        os.environ["BATCHCHOL_POTRF_KERNEL"] = fam
        for dtype in dtypes:
            for n in (5, 33, 64, 100, 130):
                A = random_spd((3,), n, dtype)
                for upper in (False, True):
                    ops.potrf(A, upper)
        torch.cuda.synchronize()
    os.environ.pop("BATCHCHOL_POTRF_KERNEL")


def blocked_workload(quick):
    """The blocked family forced at orders of several panel steps and update groups (a
    failing minor at n = 200), and the ragged families that launch it (greedy, lazy,
    binned). --quick (racecheck's pace): float32 and float64 at n = 130 and 300 only."""
    import os

    from torch_batchchol import ragged

    ops = torch.ops.batchchol
    real = [torch.float32, torch.float64]
    dtypes = real if quick else real + [torch.complex64, torch.complex128]
    os.environ["BATCHCHOL_POTRF_KERNEL"] = "blocked"
    for dtype in dtypes:
        for n in (130, 300) if quick else (70, 130, 200, 300, 520):
            A = random_spd((2 if quick else 3,), n, dtype)
            if n == 200:
                A[1, 150, 150] = -1.0
            for upper in (False, True):
                ops.potrf(A, upper)
        torch.cuda.synchronize()
    os.environ.pop("BATCHCHOL_POTRF_KERNEL")
    if quick:
        return
    for dtype in real:
        r = ragged.pack([random_spd((), n, dtype) for n in (5, 300, 1, 130, 70, 257, 0, 64, 200)])
        for fam in ("greedy", "lazy", "binned"):
            os.environ["BATCHCHOL_VBATCHED_KERNEL"] = fam
            for upper in (False, True):
                ops.potrf_vbatched(r.values, r.n.cuda(), r.offsets.cuda(), 300, upper)
        torch.cuda.synchronize()
    os.environ.pop("BATCHCHOL_VBATCHED_KERNEL")


def listed_workload(quick):
    """Binned's lazy blocked launches over the list of the matrices past 32, with more of
    them than the capped grids have slots (4,500 of orders 33..72 and one of 300, amid
    orders 0..32), so that the diagonal, panel and update blocks and warps loop over the
    list and reuse their shared memory; lower and upper, float32 and float64. --quick
    (racecheck's pace: it spent minutes on the thousands of matrices an H100's capped
    grids need before they loop): 40 matrices of orders 33..72 and one of 200, with the
    grids capped at 2 blocks (BATCHCHOL_RAGGED_LISTED_GRID); float64 lower and upper
    with left-looking and with strip updates, float32 lower."""
    import os

    from torch_batchchol import ragged

    ops = torch.ops.batchchol
    g = torch.Generator().manual_seed(3)
    many, small, big = (40, 20, 200) if quick else (4500, 400, 300)
    sizes = torch.cat([torch.randint(0, 33, (small,), generator=g),
                       torch.randint(33, 73, (many,), generator=g), torch.tensor([big])])
    sizes = sizes[torch.randperm(len(sizes), generator=g)].tolist()
    os.environ["BATCHCHOL_VBATCHED_KERNEL"] = "binned"
    os.environ.pop("BATCHCHOL_RAGGED_LISTED", None)  # =0 would run the whole-batch grids
    if quick:
        os.environ["BATCHCHOL_RAGGED_LISTED_GRID"] = "2"
    for dtype in (torch.float64, torch.float32):
        r = ragged.pack([torch.eye(n, dtype=dtype, device="cuda") * (n + 1) +
                         torch.rand(n, n, dtype=dtype, device="cuda") for n in sizes])
        full = not quick or dtype == torch.float64
        for left in ("1", "0") if quick and full else ("1",):
            os.environ["BATCHCHOL_BLOCKED_LEFT"] = left
            for upper in (False, True) if full else (False,):
                ops.potrf_vbatched(r.values, r.n.cuda(), r.offsets.cuda(), big, upper)
        torch.cuda.synchronize()
    for var in ("BATCHCHOL_VBATCHED_KERNEL", "BATCHCHOL_RAGGED_LISTED_GRID",
                "BATCHCHOL_BLOCKED_LEFT"):
        os.environ.pop(var, None)


def tile_workload():
    """The tile2, tile4, tile and tile16 families forced, float64 with the trailing updates
    on the MMAs and on the FMA pipes (BATCHCHOL_TILE_MMA=0) and float32, at two, four, five
    / seven and six / eight tile columns (float64 four on tile4, float64 five and float32
    seven on tile: the packed stage, tile_packed.cuh; a failing minor five rows from the
    end), both triangles; and ragged batches of 24 matrices on the listed tile launches
    (BATCHCHOL_VBATCHED_KERNEL=tile, one launch per group), lower only, float64 up to 190
    and float32 up to 250 (groups on all three widths). Their grids hold a block per
    matrix: the blocks' loop over their group (a stage refilled by the next matrix's
    copies) needs more matrices than four waves of resident blocks, too many for
    racecheck's pace, and is not covered here; nor is tile-one (matrices of several tile
    counts in one packed launch). Eight matrices of 33..64 on the warp64 list kernel
    (each of its widths), both triangles, float64 and float32: one per warp of its
    resident grid, so a warp's next matrix refilling its slot is not covered here either
    (the GPU tests loop, without racecheck). Then the fused tile posv at float64 40 (tile4
    forced), 70, 100, 128 (tile forced) and float32 70 (its own build:
    tile_posv_min_blocks), 100, 170, 192, one, two and five columns, posv and posv_solve
    (BATCHCHOL_POSV_FUSED_MAX_K=4096)."""
    import os

    from torch_batchchol import ragged

    ops = torch.ops.batchchol
    cases = ((torch.float64, "1"), (torch.float64, "0"), (torch.float32, "1"))
    for fam in ("tile2", "tile4", "tile", "tile16"):
        os.environ["BATCHCHOL_POTRF_KERNEL"] = fam
        for dtype, mma in cases:
            os.environ["BATCHCHOL_TILE_MMA"] = mma
            for n in (40, 100, 160, 190) if dtype == torch.float64 else (40, 100, 200, 250):
                A = random_spd((2,), n, dtype)
                A[1, n - 5, n - 5] = -1.0
                for upper in (False, True):
                    ops.potrf(A, upper)
        torch.cuda.synchronize()
    os.environ.pop("BATCHCHOL_POTRF_KERNEL")
    # The fused tile posv (tile_posv.cu) at its orders, one, two and five columns (more
    # than a four-warp block's warps), with L (posv, fused by the switch) and without;
    # float64 40 on forced tile4 (two tile columns), 100 and 128 on forced tile.
    os.environ["BATCHCHOL_POSV_FUSED_MAX_K"] = "4096"
    for dtype, mma in cases:
        os.environ["BATCHCHOL_TILE_MMA"] = mma
        for n in (40, 70, 100, 128) if dtype == torch.float64 else (70, 100, 170, 192):
            if n == 40:
                os.environ["BATCHCHOL_POTRF_KERNEL"] = "tile4"
            elif dtype == torch.float64 and n > 96:
                # (tile4's packed default there runs potrf + potrs: posv_tile_warps)
                os.environ["BATCHCHOL_POTRF_KERNEL"] = "tile"
            else:
                os.environ.pop("BATCHCHOL_POTRF_KERNEL", None)
            A = random_spd((2,), n, dtype)
            A[1, n - 5, n - 5] = -1.0
            for upper in (False, True):
                for k in (1, 2, 5):
                    B = torch.rand(2, n, k, dtype=dtype, device="cuda")
                    ops.posv(A, B, upper)
                    ops.posv_solve(A, B, upper)
        torch.cuda.synchronize()
    for var in ("BATCHCHOL_POTRF_KERNEL", "BATCHCHOL_POSV_FUSED_MAX_K"):
        os.environ.pop(var, None)
    os.environ["BATCHCHOL_VBATCHED_KERNEL"] = "tile"
    g = torch.Generator().manual_seed(5)
    for dtype, mma in cases:
        os.environ["BATCHCHOL_TILE_MMA"] = mma
        top = 190 if dtype == torch.float64 else 250
        sizes = torch.randint(33, top, (24,), generator=g).tolist()
        r = ragged.pack([torch.eye(n, dtype=dtype, device="cuda") * (n + 1) +
                         torch.rand(n, n, dtype=dtype, device="cuda") for n in sizes])
        ops.potrf_vbatched(r.values, r.n.cuda(), r.offsets.cuda(), top, False)
        torch.cuda.synchronize()
    # The warp64 list kernel (sizes 33..64, each width), both triangles, a failing
    # minor past row 32.
    for dtype in (torch.float64, torch.float32):
        sizes = [33, 64, 40, 41, 48, 49, 57, 36]
        mats = [torch.eye(n, dtype=dtype, device="cuda") * (n + 1) +
                torch.rand(n, n, dtype=dtype, device="cuda") for n in sizes]
        mats[1][40, 40] = -1.0
        r = ragged.pack(mats)
        for upper in (False, True):
            ops.potrf_vbatched(r.values, r.n.cuda(), r.offsets.cuda(), 64, upper)
        torch.cuda.synchronize()
    for var in ("BATCHCHOL_VBATCHED_KERNEL", "BATCHCHOL_TILE_MMA"):
        os.environ.pop(var, None)


def ragged_workload(dtypes, quick):
    """Every vbatched op and kernel family, tightly packed blocks (so that any
    out-of-block access hits a neighbour or the end of the buffer), host and device
    metadata, and invalid device metadata."""
    import os

    from torch_batchchol import ragged

    ops = torch.ops.batchchol
    sizes = [5, 33, 1, 17, 70, 32, 0, 64, 130] if not quick else [5, 33, 17, 40]
    for dtype in dtypes:
        mats = [random_spd((), n, dtype) for n in sizes]
        r = ragged.pack(mats)
        b, boff, k = ragged.pack_rhs([torch.randn(n, 3, dtype=dtype, device="cuda") for n in sizes], r.n)
        for fam in ("warp", "registers", "shared", "greedy", "lazy", "binned", "tile", "tile-one"):
            os.environ["BATCHCHOL_VBATCHED_KERNEL"] = fam
            for upper in (False, True):
                for meta in ((r.n, r.offsets, boff), (r.n.cuda(), r.offsets.cuda(), boff.cuda())):
                    n, off, bo = meta
                    L, info = ops.potrf_vbatched(r.values, n, off, 140, upper)
                    ops.potrs_vbatched(L, n, off, b, bo, k, 140, upper)
                    ops.posv_vbatched(r.values, n, off, b, bo, k, None, upper)
                    ops.trsm_vbatched(L, n, off, b, bo, k, 140, upper, True, True, False)
        # Only sizes up to 32: the warp family's own dispatch (max_n <= 32), and its
        # one-pass posv (two columns: the float64 crossover's largest k).
        rs = ragged.pack([m for m in mats if m.shape[-1] <= 32] +
                         [torch.eye(n, dtype=dtype, device="cuda") * 2 for n in (2, 9, 24, 31)])
        bs, bsoff, ks = ragged.pack_rhs(
            [torch.randn(int(n), 2, dtype=dtype, device="cuda") for n in rs.n], rs.n)
        for fam in ("warp", "registers"):
            os.environ["BATCHCHOL_VBATCHED_KERNEL"] = fam
            for upper in (False, True):
                ops.potrf_vbatched(rs.values, rs.n, rs.offsets, 32, upper)
                ops.potrf_vbatched(rs.values, rs.n.cuda(), rs.offsets.cuda(), 32, upper)
                ops.posv_vbatched(rs.values, rs.n.cuda(), rs.offsets.cuda(), bs, bsoff.cuda(),
                                  ks, 32, upper)
        os.environ.pop("BATCHCHOL_VBATCHED_KERNEL")
        # Invalid device metadata through the fused prologue (ragged_prologue.h; for the
        # warp family's sizes with max_n = 32, the one-launch potrf) and the separate steps
        # it replaces.
        for prologue in ("1", "0"):
            os.environ["BATCHCHOL_RAGGED_PROLOGUE"] = prologue
            bad_small = rs.n.clone()
            bad_small[0] = -1
            ops.potrf_vbatched(rs.values, bad_small.cuda(), rs.offsets.cuda(), 32, False)
            # The same sizes out of offset order and with two blocks that overlap: with
            # the prologue, the one-launch potrf's pairwise pass and whole clear of L.
            ops.potrf_vbatched(rs.values, rs.n.flip(0).cuda(), rs.offsets.flip(0).cuda(), 32,
                               False)
            small_clash = rs.offsets.clone()
            small_clash[3] = small_clash[2]
            ops.potrf_vbatched(rs.values, rs.n.cuda(), small_clash.cuda(), 32, True)
            bad_n = r.n.clone()
            bad_n[1] = 500
            bad_off = r.offsets.clone()
            bad_off[2] = r.values.numel() - 3
            ops.posv_vbatched(r.values, bad_n.cuda(), bad_off.cuda(), b, boff.cuda(), k, 140, False)
            # Valid blocks out of offset order, and two blocks that overlap: the status
            # kernels' pairwise pass and the output's grid-wide clear.
            ops.potrf_vbatched(r.values, r.n.flip(0).cuda(), r.offsets.flip(0).cuda(), 140, False)
            clash = r.offsets.clone()
            clash[3] = clash[2]
            ops.posv_vbatched(r.values, r.n.cuda(), clash.cuda(), b, boff.cuda(), k, 140, False)
            b_clash = boff.clone()
            b_clash[3] = b_clash[2]  # two right-hand sides that overlap, their matrices valid
            ops.posv_vbatched(r.values, r.n.cuda(), r.offsets.cuda(), b, b_clash.cuda(), k, 140,
                              False)
            # After the block that ends the buffer, an invalid one whose offset lies just
            # past the end: the gap between them is outside the buffer, not to be zeroed.
            past_n = torch.cat([r.n, torch.tensor([2])]).cuda()
            past_off = torch.cat([r.offsets, torch.tensor([r.values.numel() + 5])]).cuda()
            ops.potrf_vbatched(r.values, past_n, past_off, 140, False)
        os.environ.pop("BATCHCHOL_RAGGED_PROLOGUE")
        x = ops._gemm_vbatched(r.values, r.offsets.cuda(), -1, -1, True, r.values, r.offsets.cuda(),
                               -1, -1, False, r.n.cuda(), r.offsets.cuda(), r.values.numel())
        ops._tri_vbatched(x, r.n.cuda(), r.offsets.cuda(), 2)
        ragged_column_solves(ops, dtype, quick)
        torch.cuda.synchronize()


def ragged_column_solves(ops, dtype, quick):
    """The ragged left solves on the column-per-lane kernels (batches of orders <= 16):
    both triangles and transposes, host and device metadata, an invalid
    system larger than the valid ones (its NaN), and, with one column, enough systems
    that warps make a second trip with their slots holding matrices of other orders."""
    from torch_batchchol import ragged

    g = torch.Generator().manual_seed(1)
    for k in (3, 9):
        sizes = torch.randint(0, 17, (40 if quick else 300,), generator=g).tolist()
        r = ragged.pack([torch.eye(n, dtype=dtype, device="cuda") * 2 + 0.1 for n in sizes])
        L = r.values.clone()
        b, boff, _ = ragged.pack_rhs([torch.randn(n, k, dtype=dtype, device="cuda") for n in sizes],
                                     r.n)
        for upper in (False, True):
            for n, off, bo in ((r.n, r.offsets, boff), (r.n.cuda(), r.offsets.cuda(), boff.cuda())):
                ops.potrs_vbatched(L, n, off, b, bo, k, None, upper)
                for trans in (False, True):
                    ops.trsm_vbatched(L, n, off, b, bo, k, None, upper, True, trans, trans)
        big = r.n.clone()
        big[0] = 40
        bad = r.offsets.clone()
        bad[0] = L.numel() - 2
        ops.potrs_vbatched(L, big.cuda(), bad.cuda(), b, boff.cuda(), k, None, False)
    if dtype == torch.float64:
        sizes = torch.randint(1, 17, (20_000,), generator=g)
        ext = sizes * sizes
        off = torch.cumsum(ext, 0) - ext
        L = torch.rand(int(ext.sum()), dtype=dtype, device="cuda") + 1.0
        b = torch.randn(int(sizes.sum()), dtype=dtype, device="cuda")
        ops.potrs_vbatched(L, sizes, off, b, torch.cumsum(sizes, 0) - sizes, 1, None, False)


if __name__ == "__main__":
    main()
