"""potrf, potrs, trsm and posv_solve of a few large systems against torch (cholesky_ex,
cholesky_solve, linalg.solve_triangular, cholesky_ex + cholesky_solve), to check the
single-matrix / single-system routes (csrc/cuda/potrf_single.cu, solve_single.cu,
csrc/cpu/single_cpu.cpp) and where the library's own kernels stand without them.

    python3 tools/single_system_solves.py [--sizes 192 256 512 2048] [--batches 1 4]
    python3 tools/single_system_solves.py --device cpu --sizes 192 512 1024

Columns: ours (the default), kernels (BATCHCHOL_POTRF_SINGLE=0 and
BATCHCHOL_SOLVE_SINGLE=0: the library's kernels throughout), torch, and the speedup of
ours over torch. Lower factors; the solves with one and 16 right-hand sides.
"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import common  # noqa: E402
import torch_batchchol  # noqa: F401,E402

ops = torch.ops.batchchol


def timed(fn, dev, env=None):
    with common.environ(env or {}):
        return common.time_ms(lambda _: fn(), 1, dev)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[160, 192, 224, 256, 512, 2048])
    ap.add_argument("--batches", type=int, nargs="+", default=[1])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    dev = torch.device(args.device)
    where = torch.cuda.get_device_name() if dev.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(where, "torch", torch.__version__)
    print(f"{'op':>6} {'dtype:n:batch:k':>20} {'ours':>8} {'kernels':>8} {'torch':>8} {'speedup':>8}")
    off = {"BATCHCHOL_SOLVE_SINGLE": "0", "BATCHCHOL_POTRF_SINGLE": "0"}
    for dname in args.dtypes:
        dtype = getattr(torch, dname)
        for n in args.sizes:
            for batch in args.batches:
                A = common.spd_batch(batch, n, dtype, dev)
                L = torch.linalg.cholesky(A)
                for k in (1, 16):
                    B = torch.randn(batch, n, k, dtype=dtype, device=dev)
                    cases = [] if k > 1 else [
                        ("potrf", lambda: ops.potrf(A, False), lambda: torch.linalg.cholesky_ex(A))]
                    cases += [
                        ("potrs", lambda: ops.potrs(L, B, False), lambda: torch.cholesky_solve(B, L)),
                        ("trsm", lambda: ops.trsm(L, B, False, True, False, False),
                         lambda: torch.linalg.solve_triangular(L, B, upper=False)),
                        ("posv", lambda: ops.posv_solve(A, B, False),
                         lambda: torch.cholesky_solve(B, torch.linalg.cholesky_ex(A).L)),
                    ]
                    for name, ours, theirs in cases:
                        t_ours, t_kern, t_torch = timed(ours, dev), timed(ours, dev, off), timed(theirs, dev)
                        print(f"{name:>6} {f'{dname}:{n}:{batch}:{k}':>20} {t_ours:8.3f} {t_kern:8.3f} "
                              f"{t_torch:8.3f} {t_torch / t_ours:7.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
