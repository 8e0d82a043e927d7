"""Times the warp family's switches and prints where each one wins.

  - BATCHCHOL_POSV_FUSED_MAX_K: the most right-hand sides for which posv (n <= 32) runs
    the fused kernel instead of potrf + potrs; measured with it at 0 (never fused) and
    at 4096 (always), for each n and k.
  - BATCHCHOL_WARP_P32: lanes per matrix for float32 n = 32 (8 or 16), for potrf and
    posv_solve.

The defaults in csrc/cuda/posv_cuda.cu (posv_fused_max_k) and warp_chol_launch.cuh
(warp_lanes) are written from this script's output.

    python benchmarks/tune_posv.py [--sizes 8 16 32] [--nrhs 1 2 4 8 16 32] [--json out.json]
"""

import argparse
import os
import sys

import torch

import torch_batchchol  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ops = torch.ops.batchchol


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--nrhs", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"{'dtype':8} {'n':>3} {'k':>3} {'fused ms':>9} {'unfused':>9}  faster", flush=True)
    for dname in args.dtypes:
        dtype = getattr(torch, dname)
        for n in args.sizes:
            A = common.spd_batch(args.batch, n, dtype)
            for k in args.nrhs:
                B = torch.randn(args.batch, n, k, dtype=dtype, device="cuda")
                fused = common.median_ms_with_env({"BATCHCHOL_POSV_FUSED_MAX_K": "4096"}, lambda: ops.posv(A, B, False))
                unfused = common.median_ms_with_env({"BATCHCHOL_POSV_FUSED_MAX_K": "0"}, lambda: ops.posv(A, B, False))
                best = "fused" if fused < unfused else "unfused"
                print(f"{dname:8} {n:3d} {k:3d} {fused:9.3f} {unfused:9.3f}  {best}", flush=True)
                rows.append(dict(kind="fused_max_k", dtype=dname, n=n, k=k, batch=args.batch,
                                 fused_ms=fused, unfused_ms=unfused))
                del B
            del A
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
