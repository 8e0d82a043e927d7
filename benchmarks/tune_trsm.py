"""Times the kernel families of trsm and potrs (BATCHCHOL_TRSM_KERNEL = stream / warp /
cols / block / panel; cols, block and panel for real types only, cols and block for
n <= 32 / n <= 128 only) against torch.linalg in one run, on the issue's sweep (batches
as bench_fixed, or --batches), and prints the effective bandwidth of the fastest family.

    python benchmarks/tune_trsm.py [--sizes 4 8 ... 512] [--nrhs 1 16] [--json out.json]
    python benchmarks/tune_trsm.py --max-cpw 16 8 4   # also: columns per warp (warp family)
    python benchmarks/tune_trsm.py --families warp panel --sizes 256 1024 --batches 4 64 \
        --panel-warps 4 8                             # also: the panel family's block size
    python benchmarks/tune_trsm.py --families panel --sizes 512 --batches 16 \
        --variants kc8:BATCHCHOL_TRSM_KERNEL=panel,BATCHCHOL_PANEL_KC=8
                                                      # also: any switches, labelled

Effective bandwidth counts the matrix once and B and X once (bench_fixed's bytes).
"""

import argparse
import os
import sys

import torch

import torch_batchchol  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

ops = torch.ops.batchchol
FAMILIES = ("stream", "warp", "cols", "block", "panel")
# Beyond these orders BATCHCHOL_TRSM_KERNEL=cols / block falls back to the default.
MAX_N = {"cols": 32, "block": 128}


def batch_for(n, dtype):
    # bench_fixed's batches: >= 256 MB of matrices below 64, 10,000 to 256, 2,000 at 512.
    if n < 64:
        return common.batch_for_bytes(n, dtype)
    return 10_000 if n <= 256 else 2_000


def triangle(batch, n, dtype):
    L = torch.randn(batch, n, n, dtype=dtype, device="cuda").tril_(-1).mul_(0.5 / n)
    return L + torch.eye(n, dtype=dtype, device="cuda") * 2


def _backend_ms(backend, fn):
    with common.linalg_backend(backend):
        return common.median_ms(fn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32, 64, 128, 256, 512])
    ap.add_argument("--nrhs", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--ops", nargs="+", default=["trsm", "potrs"])
    ap.add_argument("--max-cpw", type=int, nargs="*", default=[],
                    help="also time the warp family with BATCHCHOL_TRSM_MAX_CPW at these values")
    ap.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    ap.add_argument("--batches", type=int, nargs="*", default=[],
                    help="systems per point (default: bench_fixed's batch for the order)")
    ap.add_argument("--panel-warps", nargs="*", default=[], choices=["4", "8"],
                    help="also time the panel family with BATCHCHOL_PANEL_WARPS at these values")
    ap.add_argument("--variants", nargs="*", default=[],
                    help="also time LABEL:VAR=VALUE[,VAR=VALUE...] (environment switches)")
    ap.add_argument("--column-major", action="store_true",
                    help="store the triangles column-major (as torch.linalg.cholesky returns them)")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"{'op':6} {'dtype':8} {'n':>4} {'k':>3} {'batch':>8} "
          + " ".join(f"{f:>8}" for f in args.families)
          + f" {'torch':>8} {'vs torch':>8} {'GB/s':>6}  variants", flush=True)
    for op in args.ops:
        for dname in args.dtypes:
            dtype = getattr(torch, dname)
            points = [(n, b) for n in args.sizes for b in args.batches or [batch_for(n, dtype)]]
            for n, batch in points:
                L = triangle(batch, n, dtype)
                if args.column_major:
                    L = L.mT.contiguous().mT
                for k in args.nrhs:
                    B = torch.randn(batch, n, k, dtype=dtype, device="cuda")
                    if op == "trsm":
                        ours = lambda: ops.trsm(L, B, False, True, False, False)  # noqa: E731
                        ref = common.median_ms(lambda: torch.linalg.solve_triangular(L, B, upper=False))
                    else:
                        ours = lambda: ops.potrs(L, B, False)  # noqa: E731
                        # cuSOLVER loops over the batch beyond one right-hand side.
                        ref = min(_backend_ms(b, lambda: torch.cholesky_solve(B, L))
                                  for b in (("cusolver", "magma") if k == 1 else ("magma",)))
                    t = {f: common.median_ms_with_env({"BATCHCHOL_TRSM_KERNEL": f}, ours)
                         for f in args.families if n <= MAX_N.get(f, n)}
                    for cap in args.max_cpw:
                        t[f"warp-cpw{cap}"] = common.median_ms_with_env(
                            {"BATCHCHOL_TRSM_KERNEL": "warp", "BATCHCHOL_TRSM_MAX_CPW": str(cap)}, ours)
                    for w in args.panel_warps:
                        t[f"panel-w{w}"] = common.median_ms_with_env(
                            {"BATCHCHOL_TRSM_KERNEL": "panel", "BATCHCHOL_PANEL_WARPS": w}, ours)
                    for spec in args.variants:
                        label, _, assigns = spec.partition(":")
                        env = dict(a.split("=", 1) for a in assigns.split(","))
                        t[label] = common.median_ms_with_env(env, ours)
                    t["default"] = common.median_ms(ours)
                    best = min(t.values())
                    nbytes = batch * (n * n + 2 * n * k) * L.element_size()
                    gbs = nbytes / (best * 1e-3) / 1e9
                    variants = "".join(f" {key} {v:.3f}" for key, v in t.items()
                                       if key not in FAMILIES)
                    print(f"{op:6} {dname:8} {n:4d} {k:3d} {batch:8d} "
                          + " ".join(f"{t.get(f, float('nan')):8.3f}" for f in args.families)
                          + f" {ref:8.3f} {ref / best:8.2f} {gbs:6.0f} {variants}", flush=True)
                    rows.append(dict(op=op, dtype=dname, n=n, k=k, batch=batch, torch_ms=ref,
                                     **{f"{f}_ms": v for f, v in t.items()}))
    if args.json:
        common.write_tuning_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
