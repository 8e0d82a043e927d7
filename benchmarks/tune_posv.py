"""Times the warp family's switches and prints where each one wins.

  - BATCHCHOL_POSV_FUSED_MAX_K: the most right-hand sides for which posv and posv_solve
    run a fused kernel instead of potrf + potrs (the warp family's for n <= 32 and float32
    up to 64, the wide family's two-warp one for float64 33..64, the tile family's for
    float64 65..96 and float32 65..192; float64 97..128 fuse only without the MMA update,
    else both arms run potrf + potrs there; sizes past 128 / 192 are skipped); measured
    with it at 0 (never fused) and at 4096 (always), for each op, n and k. posv writes L
    either way; posv_solve keeps the fused kernel's factor on chip, so its crossover is
    higher. posv_vbatched (the warp family's ragged pass, max_n <= 32) takes posv's
    crossover at n = max_n; --ragged times it on uniform sizes in [1, 32] to check that.
  - BATCHCHOL_WARP_P32: lanes per matrix for float32 n = 32 (8 or 16), for potrf and
    posv_solve.

The defaults in csrc/cuda/posv_cuda.cu (posv_fused_max_k, posv_tile_max_k) and warp_chol_launch.h
(warp_lanes) are written from this script's output; posv_wide_max_k there from an
interleaved A/B of the same comparison (benchmarks/results/h100-2026-11-24-wide-posv-ab.txt),
which this script repeats for float64 33..64 with `--nrhs 1 2 3`.

    python benchmarks/tune_posv.py [--sizes 8 16 32 48 64] [--nrhs 1 2 4 8 16 32] [--json out.json]
"""

import argparse
import os
import sys

import torch

import torch_batchchol  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from bench_vbatched import make_batch  # noqa: E402

ops = torch.ops.batchchol

FUSED_MAX_N = {"float32": 192, "float64": 128}


def ragged_crossover(args):
    """posv_vbatched fused vs potrf_vbatched + potrs_vbatched, uniform sizes in [1, 32]."""
    rows = []
    gen = torch.Generator().manual_seed(0)
    n = torch.randint(1, 33, (args.ragged,), generator=gen)
    print(f"\nposv_vbatched, {args.ragged} matrices of n uniform in [1, 32]", flush=True)
    for dname in args.dtypes:
        dtype = getattr(torch, dname)
        values, nd, od = make_batch(n, dtype, "cuda")
        for k in args.nrhs:
            b = torch.rand(int(n.sum()) * k, dtype=dtype, device="cuda")
            boff = (nd.cumsum(0) - nd) * k
            t = {v: common.median_ms_with_env(
                     {"BATCHCHOL_POSV_FUSED_MAX_K": v},
                     lambda: ops.posv_vbatched(values, nd, od, b, boff, k, 32, False))
                 for v in ("4096", "0")}
            best = "fused" if t["4096"] < t["0"] else "unfused"
            print(f"{dname:8} max_n 32 {k:3d} {'ragged':>10} {t['4096']:9.3f} {t['0']:9.3f}  {best}",
                  flush=True)
            rows.append(dict(kind="ragged_fused_max_k", dtype=dname, max_n=32, k=k,
                             batch=args.ragged, fused_ms=t["4096"], unfused_ms=t["0"]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 48, 64])
    ap.add_argument("--nrhs", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--ragged", type=int, default=50_000,
                    help="matrices of the posv_vbatched check (0: skip it)")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"{'dtype':8} {'n':>3} {'k':>3} {'op':>10} {'fused ms':>9} {'unfused':>9}  faster", flush=True)
    for dname in args.dtypes:
        dtype = getattr(torch, dname)
        for n in args.sizes:
            if n > FUSED_MAX_N[dname]:
                continue  # no fused kernel (tile_posv_max_n, csrc/cuda/tile_launch.h)
            A = common.spd_batch(args.batch, n, dtype)
            for k in args.nrhs:
                B = torch.randn(args.batch, n, k, dtype=dtype, device="cuda")
                for op in ("posv", "posv_solve"):
                    fn = getattr(ops, op)
                    t = {v: common.median_ms_with_env({"BATCHCHOL_POSV_FUSED_MAX_K": v},
                                                      lambda: fn(A, B, False))
                         for v in ("4096", "0")}
                    best = "fused" if t["4096"] < t["0"] else "unfused"
                    print(f"{dname:8} {n:3d} {k:3d} {op:>10} {t['4096']:9.3f} {t['0']:9.3f}  {best}",
                          flush=True)
                    rows.append(dict(kind="fused_max_k", op=op, dtype=dname, n=n, k=k,
                                     batch=args.batch, fused_ms=t["4096"], unfused_ms=t["0"]))
                del B
            del A
    if args.ragged:
        rows += ragged_crossover(args)
    A = common.spd_batch(args.batch, 32, torch.float32)
    B = torch.randn(args.batch, 32, 1, device="cuda")
    print(f"\nfloat32 n = 32, batch {args.batch}: lanes per matrix", flush=True)
    for name, fn in (("potrf", lambda: ops.potrf(A, False)), ("posv_solve", lambda: ops.posv_solve(A, B, False))):
        t = {p: common.median_ms_with_env({"BATCHCHOL_WARP_P32": p}, fn) for p in ("8", "16")}
        print(f"  {name:10} P=8 {t['8']:.3f} ms   P=16 {t['16']:.3f} ms", flush=True)
        rows.append(dict(kind="p32_lanes", op=name, batch=args.batch, ms_p8=t["8"], ms_p16=t["16"]))
    if args.json:
        common.write_tuning_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
