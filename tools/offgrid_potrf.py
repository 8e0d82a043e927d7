"""potrf at orders and batch sizes off the issue's sweep, against torch.linalg.cholesky_ex
(the faster of its cuSOLVER and MAGMA backends), to find cliffs that the sweep's sizes
(powers of two, batches of 10,000) do not show: odd orders next to the dispatch
crossovers, n > 512, small batches.

    python3 tools/offgrid_potrf.py                    # the default cases
    python3 tools/offgrid_potrf.py float64:1024:100 float32:100:1000

    FAMILIES=blocked,left,shared python3 tools/offgrid_potrf.py float64:256:1
    python3 tools/offgrid_potrf.py float64:33-48/4 float32:4,6,8-64/8   # bench_fixed's batches

Each case is dtype:n:batch, or dtype:orders with orders a comma list of orders and
ranges a-b/step (step 1 if left out), each at bench_fixed's potrf batch (256 MB of inputs
below n = 64, 10,000 from 64, 2,000 from 512). Prints ms, the speedup over the faster backend, the host
time per call (issued back to back, no sync: when it is near the GPU time, the call is
bound by its launches) and the largest relative backward error max ||A - L L^T|| / ||A||
over the batch in units of n * eps (the tests' bound is a small multiple of one). With
FAMILIES, also each named family's time (forced through BATCHCHOL_POTRF_KERNEL; a family
that does not support n runs the default choice).
"""

import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import common  # noqa: E402
from bench_fixed import default_batch  # noqa: E402
import torch_batchchol  # noqa: F401,E402

DEFAULT = [
    f"{d}:{n}:{b}"
    for d in ("float32", "float64")
    for n, b in ((3, 100_000), (20, 100_000), (33, 50_000), (50, 20_000), (65, 10_000), (100, 10_000),
                 (129, 10_000), (200, 5_000), (257, 2_000), (300, 2_000), (400, 2_000), (513, 1_000),
                 (768, 500), (1024, 200), (2048, 20), (64, 100), (128, 100), (256, 100), (512, 10),
                 (32, 1), (256, 1))
]


def expand_spec(spec):
    """(dtype name, n, batch) cases of one command-line spec (see the module docstring)."""
    parts = spec.split(":")
    if len(parts) == 3:
        return [(parts[0], int(parts[1]), int(parts[2]))]
    if len(parts) != 2:
        raise SystemExit(f"bad case {spec!r}: dtype:n:batch or dtype:orders")
    dname, orders = parts
    dtype = getattr(torch, dname)
    cases = []
    for item in orders.split(","):
        rng, _, step = item.partition("/")
        lo, _, hi = rng.partition("-")
        for n in range(int(lo), int(hi or lo) + 1, int(step or 1)):
            cases.append((dname, n, default_batch("potrf", n, dtype)))
    return cases


def backward_error(A, L):
    eps = torch.finfo(A.dtype).eps
    n = A.shape[-1]
    R = torch.linalg.matrix_norm(A - L @ L.mH) / torch.linalg.matrix_norm(A)
    return (R.max() / (n * eps)).item()


def host_us(fn, calls=50):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def main(argv):
    dev = torch.device("cuda")
    print(f"{torch.cuda.get_device_name()}  torch {torch.__version__}")
    families = [f for f in os.environ.get("FAMILIES", "").split(",") if f]
    print(f"{'case':>22} {'ours ms':>9} {'torch ms':>9} {'backend':>8} {'speedup':>8} {'host us':>8} "
          f"{'err/(n eps)':>12}" + "".join(f" {f:>10}" for f in families))
    for dname, n, batch in (case for spec in argv or DEFAULT for case in expand_spec(spec)):
        dtype = getattr(torch, dname)
        spec = f"{dname}:{n}:{batch}"
        A = common.spd_batch(batch, n, dtype)
        ours = common.time_ms(lambda _: torch.ops.batchchol.potrf(A, False), 1, dev)
        host = host_us(lambda: torch.ops.batchchol.potrf(A, False))
        forced = []
        for f in families:
            with common.environ({"BATCHCHOL_POTRF_KERNEL": f}):
                forced.append(common.time_ms(lambda _: torch.ops.batchchol.potrf(A, False), 1, dev))
        L, info = torch.ops.batchchol.potrf(A, False)
        err = backward_error(A, L) if batch * n * n <= (1 << 28) else float("nan")
        best = None
        for b in ("cusolver", "magma"):
            with common.linalg_backend(b):
                t = common.time_ms(lambda _: torch.linalg.cholesky_ex(A), 1, dev)
            if best is None or t < best[0]:
                best = (t, b)
        bad = int((info != 0).sum())
        flag = f"  info != 0 for {bad}" if bad else ""
        print(f"{spec:>22} {ours:9.3f} {best[0]:9.3f} {best[1]:>8} {best[0] / ours:7.2f}x {host:8.1f} "
              f"{err:12.3f}" + "".join(f" {t:10.3f}" for t in forced) + flag, flush=True)
        del A, L, info
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
