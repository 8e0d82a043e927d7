"""A short tour: torch_batchchol next to torch.linalg on a batch of SPD systems.

    python -m torch_batchchol.demo [--device cpu|cuda] [--batch N] [--n N]

Runs on CUDA when a GPU is there and the CUDA kernels were built, else on the
CPU. For each op and dtype it prints both times, the speedup, and the largest
relative difference from torch.linalg's answer; exits non-zero when an op fails
or disagrees with torch beyond the dtype's tolerance.
"""

import argparse
import statistics
import sys
import time
import warnings

import torch

import torch_batchchol as tb

# Relative difference from torch.linalg that still counts as agreement for the
# well-conditioned matrices built below (condition number below ~10).
TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-11}


def pick_device(requested):
    if requested:
        return torch.device(requested)
    if torch.cuda.is_available() and tb.cuda_kernels_built():
        return torch.device("cuda")
    return torch.device("cpu")


def make_spd(batch, n, dtype, device, gen):
    M = torch.randn(batch, n, n, dtype=dtype, device=device, generator=gen)
    return M @ M.mT / n + torch.eye(n, dtype=dtype, device=device)


def time_ms(fn, device, reps):
    """Median wall time of fn() in milliseconds, after one warm-up call."""
    fn()
    times = []
    for _ in range(reps):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def rel_diff(ours, ref):
    """Largest over the batch of ||ours - ref||_F / ||ref||_F."""
    num = torch.linalg.matrix_norm(ours - ref)
    den = torch.linalg.matrix_norm(ref).clamp_min(torch.finfo(ref.dtype).tiny)
    return (num / den).max().item()


def cases(A, B):
    """(name, ours, torch's) per op; each callable returns the tensor to compare."""
    L = torch.linalg.cholesky(A)
    return [
        ("cholesky_ex", lambda: tb.cholesky_ex(A).L, lambda: torch.linalg.cholesky_ex(A).L),
        ("cholesky_solve", lambda: tb.cholesky_solve(B, L), lambda: torch.cholesky_solve(B, L)),
        ("solve", lambda: tb.solve(A, B), lambda: torch.linalg.solve(A, B)),
        (
            "solve_triangular",
            lambda: tb.solve_triangular(L, B, upper=False),
            lambda: torch.linalg.solve_triangular(L, B, upper=False),
        ),
    ]


def ragged_case(count, nmax, dtype, device, gen):
    """A nested tensor of `count` SPD matrices of orders 1..nmax, and (ours, torch's)
    callables: tb.cholesky on the nested tensor, against torch.linalg.cholesky on one
    stacked batch per distinct size (the usual workaround)."""
    sizes = torch.randint(1, nmax + 1, (count,), generator=torch.Generator().manual_seed(1))
    mats = [make_spd(1, int(s), dtype, device, gen)[0] for s in sizes]
    with warnings.catch_warnings():  # torch's "prototype" notice for strided nested tensors
        warnings.simplefilter("ignore", UserWarning)
        A = torch.nested.nested_tensor(mats)
    groups = {}
    for i, s in enumerate(sizes.tolist()):
        groups.setdefault(s, []).append(i)
    stacks = {s: torch.stack([mats[i] for i in idx]) for s, idx in groups.items()}

    def ours():
        return tb.cholesky(A)

    def reference():
        return {s: torch.linalg.cholesky(st) for s, st in stacks.items()}

    def diff():
        got, ref = ours().unbind(), reference()
        worst = 0.0
        for s, idx in groups.items():
            worst = max(worst, rel_diff(torch.stack([got[i] for i in idx]), ref[s]))
        return worst

    return ours, reference, diff


def print_row(label, dtype, batch, ours, ref, diff, n, device, reps):
    """Times ours and torch's, prints one table row; returns 1 on failure, else 0."""
    dname = str(dtype).replace("torch.", "")
    row = f"{label:<17}{dname:<9}{n:>4}{batch:>8}"
    try:
        d = diff()
        t_ours, t_ref = time_ms(ours, device, reps), time_ms(ref, device, reps)
    except Exception as exc:  # a missing kernel shows as a row, not a traceback
        print(f"{row}  FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
        return 1
    ok = d <= TOLERANCE[dtype]
    mark = "" if ok else "  <- exceeds tolerance"
    print(f"{row}{t_ours:>10.3f}{t_ref:>10.3f}{t_ref / t_ours:>8.2f}x{d:>14.2e}{mark}")
    return 0 if ok else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default=None)
    parser.add_argument("--n", type=int, default=32)
    parser.add_argument("--batch", type=int, default=None, help="default: 10000 on GPU, 2000 on CPU")
    parser.add_argument("--nrhs", type=int, default=1)
    args = parser.parse_args(argv)

    device = pick_device(args.device)
    batch = args.batch or (10_000 if device.type == "cuda" else 2_000)
    reps = 20 if device.type == "cuda" else 5
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"torch_batchchol {tb.__version__} | torch {torch.__version__} | {device} ({name})")
    print(f"CUDA kernels built: {tb.cuda_kernels_built()} | library: {tb.LIBRARY_PATH}")
    print(f"{batch:,} SPD systems of order {args.n}, {args.nrhs} right-hand side(s)\n")

    header = f"{'op':<17}{'dtype':<9}{'n':>4}{'batch':>8}{'ours ms':>10}{'torch ms':>10}"
    header += f"{'speedup':>9}{'max rel diff':>14}"
    print(header)
    print("-" * len(header))
    gen = torch.Generator(device=device).manual_seed(0)
    rows = []  # (label, dtype, batch, ours, torch's, difference)
    for dtype in (torch.float32, torch.float64):
        A = make_spd(batch, args.n, dtype, device, gen)
        B = torch.randn(batch, args.n, args.nrhs, dtype=dtype, device=device, generator=gen)
        for op, ours, ref in cases(A, B):
            rows.append((op, dtype, batch, ours, ref, lambda o=ours, r=ref: rel_diff(o(), r())))
    failures = sum(print_row(*r, args.n, device, reps) for r in rows)
    count = min(batch, 2_000 if device.type == "cuda" else 500)
    print(f"\nragged: {count:,} matrices of orders 1..{args.n} in a nested tensor, "
          "tb.cholesky against torch.linalg.cholesky per size bucket")
    for dtype in (torch.float32, torch.float64):
        ours, ref, diff = ragged_case(count, args.n, dtype, device, gen)
        failures += print_row("cholesky(nested)", dtype, count, ours, ref, diff, args.n, device,
                              reps)
    print()
    print("all ops agree with torch.linalg" if failures == 0 else f"{failures} op(s) FAILED")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
