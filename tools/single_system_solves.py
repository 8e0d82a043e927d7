"""potrs, trsm and posv_solve of a few large systems against torch (cholesky_solve,
linalg.solve_triangular, cholesky_ex + cholesky_solve), to check the single-system
route (csrc/cuda/solve_single.cu, potrf_single.cu) and where the library's own kernels
stand without it.

    python3 tools/single_system_solves.py [--sizes 192 256 512 2048] [--batches 1 4]

Columns: ours (the default), kernels (BATCHCHOL_SOLVE_SINGLE=0: the library's kernels
throughout, posv_solve's factorization included), torch, and the
speedup of ours over torch. Lower factors, one and 16 right-hand sides.
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import common  # noqa: E402
import torch_batchchol  # noqa: F401,E402

ops = torch.ops.batchchol


def timed(fn, env=None):
    dev = torch.device("cuda")
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        return common.time_ms(lambda _: fn(), 1, dev)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[160, 192, 224, 256, 512, 2048])
    ap.add_argument("--batches", type=int, nargs="+", default=[1])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    args = ap.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    print(f"{'op':>6} {'dtype:n:batch:k':>20} {'ours':>8} {'kernels':>8} {'torch':>8} {'speedup':>8}")
    off = {"BATCHCHOL_SOLVE_SINGLE": "0"}
    for dname in args.dtypes:
        dtype = getattr(torch, dname)
        for n in args.sizes:
            for batch in args.batches:
                A = common.spd_batch(batch, n, dtype)
                L = torch.linalg.cholesky(A)
                for k in (1, 16):
                    B = torch.randn(batch, n, k, dtype=dtype, device="cuda")
                    cases = [
                        ("potrs", lambda: ops.potrs(L, B, False), lambda: torch.cholesky_solve(B, L)),
                        ("trsm", lambda: ops.trsm(L, B, False, True, False, False),
                         lambda: torch.linalg.solve_triangular(L, B, upper=False)),
                        ("posv", lambda: ops.posv_solve(A, B, False),
                         lambda: torch.cholesky_solve(B, torch.linalg.cholesky_ex(A).L)),
                    ]
                    for name, ours, theirs in cases:
                        t_ours, t_kern, t_torch = timed(ours), timed(ours, off), timed(theirs)
                        print(f"{name:>6} {f'{dname}:{n}:{batch}:{k}':>20} {t_ours:8.3f} {t_kern:8.3f} "
                              f"{t_torch:8.3f} {t_torch / t_ours:7.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
