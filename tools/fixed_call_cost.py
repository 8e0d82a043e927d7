"""Where the time of a fixed-size call goes: the bench's timer against host enqueue and GPU time.

    python3 tools/fixed_call_cost.py [--cases trsm:float64:16:131072:1,...] [--ab VAR=a,b]

bench_fixed times each call alone between two CUDA events, so the host side of a call
(dispatch, argument checks, the output's allocation, the launch) that runs before its
kernel starts is in the number. For short calls (~0.1 ms) this shows how much: the
columns of tools/ragged_call_cost.py (events, host enqueue, GPU time from a CUDA graph,
the profiler's GPU operations), for our op (and torch's for trsm), on bench_fixed's inputs.
Each case is op:dtype:n:batch:nrhs with op potrf, potrs, trsm or posv. --host-table also
prints the profiler's host-side table of our call (dispatcher ops and CUDA runtime calls,
self time per call), to see which host steps cost what.
"""

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
import torch_batchchol  # noqa: F401,E402
from ragged_call_cost import add_ab_args, parse_ab, row, start_table  # noqa: E402

DEFAULT_CASES = ("trsm:float64:16:131072:1,trsm:float32:16:262144:1,trsm:float64:256:10000:1,"
                 "potrs:float64:16:131072:1,posv:float64:32:100000:1,potrf:float64:64:10000:0")


def calls(op, A, L, B):
    """(ours, torch's) for one case."""
    ops = torch.ops.batchchol
    if op == "potrf":
        return (lambda: ops.potrf(A, False)), (lambda: torch.linalg.cholesky_ex(A))
    if op == "trsm":
        return ((lambda: ops.trsm(L, B, False, True, False, False)),
                (lambda: torch.linalg.solve_triangular(L, B, upper=False)))
    if op == "potrs":
        return (lambda: ops.potrs(L, B, False)), (lambda: torch.cholesky_solve(B, L))
    return ((lambda: ops.posv_solve(A, B, False)),
            (lambda: torch.cholesky_solve(B, torch.linalg.cholesky_ex(A)[0])))


def host_table(fn, reps=200):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    for e in sorted(rows, key=lambda e: -e.self_cpu_time_total)[:12]:
        print(f"    {e.self_cpu_time_total / reps:8.2f} us self  x{e.count / reps:<5.1f} {e.key[:70]}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=DEFAULT_CASES)
    add_ab_args(p)
    p.add_argument("--host-table", action="store_true")
    args = p.parse_args()
    ab = parse_ab(args.ab)
    device = torch.device("cuda")
    start_table(device)
    for case in args.cases.split(","):
        op, dname, n, batch, k = case.split(":")
        n, batch, k, dtype = int(n), int(batch), int(k), getattr(torch, dname)
        A = common.spd_batch(batch, n, dtype)
        L = torch.linalg.cholesky_ex(A).L
        B = torch.randn(batch, n, max(k, 1), dtype=dtype, device=device)
        ours, theirs = calls(op, A, L, B)
        name = f"{op} {dname} n={n} batch={batch} k={k}"
        row(name, ours, device, ab, args.rounds)
        if args.host_table:
            host_table(ours)
        # torch's potrs / posv (MAGMA) and cholesky_ex break under graph capture and
        # leave the process unusable: their rows are trsm's only.
        if ab is None and op == "trsm":
            row("  torch", theirs, device)
        del A, L, B
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
