"""Per-kernel GPU time of potrf_vbatched (torch.profiler), next to fixed-size potrf.

    python3 tools/ragged_kernel_times.py --dist equal --nmax 128 --batch 10000 \\
        --dtype float64 --families tile,binned

For each family (BATCHCHOL_VBATCHED_KERNEL) it prints the kernels of one call with their
mean time over --reps calls, so that the ragged path's own costs (grouping, zeroing,
empty-block launches) show beside the factorization kernels; with --dist equal it also
profiles the fixed-size potrf of the same batch. Sizes come from bench_vbatched.py.
With --host it also prints the host time of one call (enqueueing it, the GPU not
waited for) and the ATen ops and CUDA runtime calls that take it. With --timeline it
prints one call's CUDA runtime calls and kernels in time order (microseconds from the
call's first runtime call, kernels with their stream and end), so that one sees whether
the GPU waits on the host's launches or on its own critical path.
"""

import argparse
import collections
import json
import os
import sys
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import torch_batchchol  # noqa: F401,E402
from bench_vbatched import make_batch, sample_sizes  # noqa: E402


def kernel_times(fn, reps):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    acc = collections.OrderedDict()
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            acc.setdefault(ev.name, [0.0, 0])
            acc[ev.name][0] += ev.device_time / 1000.0
            acc[ev.name][1] += 1
    return [(name, t / reps, c // reps) for name, (t, c) in acc.items()]


def host_times(fn, reps):
    """Host microseconds per call (enqueue only), and the profiler's CPU-side table."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    per_call = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18)
    return per_call, table


def timeline(fn):
    """One call's runtime calls and kernels from the profiler's trace, in time order."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("ragged_call"):
            fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    # The host side: runtime calls inside the call (a sync the call itself makes stays;
    # the one after it is dropped); the GPU side: everything.
    call = [e for e in events if e.get("name") == "ragged_call" and e.get("ph") == "X"
            and e.get("cat") == "user_annotation"]
    lo, hi = (float(call[0]["ts"]), float(call[0]["ts"]) + float(call[0].get("dur", 0))) \
        if call else (float("-inf"), float("inf"))
    gpu = ("kernel", "gpu_memset", "gpu_memcpy")
    rows = [e for e in events if e.get("ph") == "X" and (
        e.get("cat") in gpu or (e.get("cat") in ("cuda_runtime", "cuda_driver") and
                                lo <= float(e["ts"]) <= hi))]
    if not rows:
        return ["(no events in the trace)"]
    t0 = min(float(e["ts"]) for e in rows)
    lines = []
    for e in sorted(rows, key=lambda e: float(e["ts"])):
        ts, dur = float(e["ts"]) - t0, float(e.get("dur", 0))
        where = f"stream {e.get('args', {}).get('stream', '?')}" if e["cat"] in gpu else "host"
        lines.append(f"  {ts:8.1f} .. {ts + dur:8.1f} us  {where:10s} {e['name'][:90]}")
    return lines


def show(title, rows):
    total = sum(t for _, t, _ in rows)
    print(f"{title}: {total:.3f} ms in kernels")
    for name, t, c in sorted(rows, key=lambda r: -r[1]):
        print(f"  {t:9.3f} ms  x{c:<3d} {name[:110]}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dist", default="equal")
    p.add_argument("--nmax", type=int, default=128)
    p.add_argument("--batch", type=int, default=10000)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--families", default="tile,binned")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--host", action="store_true", help="also the host time of a call")
    p.add_argument("--timeline", action="store_true",
                   help="also one call's runtime calls and kernels in time order")
    args = p.parse_args()
    dtype = getattr(torch, args.dtype)
    n = sample_sizes(args.dist, args.nmax, args.batch, torch.Generator().manual_seed(0))
    values, nd, od = make_batch(n, dtype, "cuda")
    max_n = int(n.max())
    ops = torch.ops.batchchol
    for fam in args.families.split(","):
        os.environ["BATCHCHOL_VBATCHED_KERNEL"] = fam
        call = lambda: ops.potrf_vbatched(values, nd, od, max_n, False)  # noqa: E731
        title = f"{fam} ({args.dist}, Nmax {args.nmax}, {args.batch} x {args.dtype})"
        show(title, kernel_times(call, args.reps))
        if args.host:
            per_call, table = host_times(call, max(args.reps, 20))
            print(f"{title}: {per_call:.1f} us of host time per call")
            print(table)
        if args.timeline:
            print(f"{title}: one call's timeline")
            print("\n".join(timeline(call)))
    os.environ.pop("BATCHCHOL_VBATCHED_KERNEL", None)
    if args.dist == "equal":
        A = values.view(args.batch, args.nmax, args.nmax)
        show("fixed-size potrf", kernel_times(lambda: ops.potrf(A, False), args.reps))


if __name__ == "__main__":
    main()
