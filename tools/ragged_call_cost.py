"""Where the time of a small ragged call goes: host enqueue, GPU work, GPU operations.

    python3 tools/ragged_call_cost.py [--cases uniform:32:5000:float32:potrf,...]

bench_vbatched times each call alone between two CUDA events, so a call whose host
side (argument checks, allocations, launches) takes longer than its GPU work reads as
its host time. For each case this prints, per call:
  events   the bench's timer (median of single calls between events)
  host     enqueue time (200 calls back to back, the GPU not waited for)
  graph    GPU time alone: the call replayed from a CUDA graph (20 calls per graph)
  ops      GPU operations (kernels, memsets, copies) the profiler sees, and their sum
and, for scale, the same columns for `x + 1` and for cholesky_ex on the padded batch.
With --ab VAR=a,b,... each case runs once per value of the environment variable VAR
(read by the extension at every call), in interleaved rounds, medians over the rounds
(an empty value unsets VAR).
"""

import argparse
import os
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import torch_batchchol  # noqa: F401,E402
from bench_vbatched import make_batch, sample_sizes  # noqa: E402
from common import time_ms  # noqa: E402

DEFAULT_CASES = (
    "uniform:32:5000:float32:potrf,uniform:32:5000:float64:potrf,"
    "skewed:32:50000:float64:potrf,uniform:32:5000:float32:posv,"
    "uniform:128:5000:float32:potrf"
)


def host_us(fn, reps=200):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t = (time.perf_counter() - t0) / reps * 1e6
    torch.cuda.synchronize()
    return t


def graph_us(fn, per_graph=20, replays=10):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(per_graph):
            fn()
    g.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        g.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / (replays * per_graph)


def gpu_ops(fn, reps=10):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(evs) / reps, sum(e.device_time for e in evs) / reps


def measure(fn, device):
    ev = time_ms(lambda _: fn(), 1, device, warmup=3, reps=50) * 1e3
    h = host_us(fn)
    try:
        g = graph_us(fn)
    except RuntimeError:  # not capturable
        g = float("nan")
    nops, t_ops = gpu_ops(fn)
    return ev, h, g, nops, t_ops


def show(name, m):
    ev, h, g, nops, t_ops = m
    print(f"{name:42s} {ev:8.1f} {h:8.1f} {g:8.1f} {nops:6.1f} {t_ops:8.1f}", flush=True)


def set_env(var, value):
    if value:
        os.environ[var] = value
    else:
        os.environ.pop(var, None)


def row(name, fn, device, ab=None, rounds=3):
    if ab is None:
        show(name, measure(fn, device))
        return
    var, values = ab
    runs = {v: [] for v in values}
    for _ in range(rounds):
        for v in values:
            set_env(var, v)
            runs[v].append(measure(fn, device))
    set_env(var, "")
    for v in values:
        cols = [statistics.median(r[c] for r in runs[v]) for c in range(5)]
        show(f"{name} [{var}={v or '-'}]", cols)


def add_ab_args(p):
    """--ab and --rounds, for row()."""
    p.add_argument("--ab", default=None, help="VAR=a,b,...: A/B of an environment switch")
    p.add_argument("--rounds", type=int, default=3)


def parse_ab(spec):
    """(VAR, [values]) from --ab's VAR=a,b,..., or None."""
    if not spec:
        return None
    var, vals = spec.split("=", 1)
    return var, vals.split(",")


def start_table(device):
    """The device line, the column heads and, for scale, the row of `x + 1`."""
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}")
    print(f"{'case (us per call)':42s} {'events':>8} {'host':>8} {'graph':>8} {'ops':>6} {'ops_us':>8}")
    x = torch.zeros(1024, device=device)
    row("x + 1", lambda: x + 1, device)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=DEFAULT_CASES,
                   help="dist:nmax:batch:dtype:op,... (op potrf or posv)")
    add_ab_args(p)
    args = p.parse_args()
    ab = parse_ab(args.ab)
    device = torch.device("cuda")
    ops = torch.ops.batchchol
    start_table(device)
    for case in args.cases.split(","):
        dist, nmax, batch, dtype, op = case.split(":")
        nmax, batch, dtype = int(nmax), int(batch), getattr(torch, dtype)
        n = sample_sizes(dist, nmax, batch, torch.Generator().manual_seed(0))
        values, nd, od = make_batch(n, dtype, "cuda")
        max_n = int(n.max())
        if op == "potrf":
            fn = lambda: ops.potrf_vbatched(values, nd, od, max_n, False)  # noqa: E731
        else:
            b = torch.rand(int(n.sum()), dtype=dtype, device=device)
            boff = (nd.cumsum(0) - nd)
            fn = lambda: ops.posv_vbatched(values, nd, od, b, boff, 1, max_n, False)  # noqa: E731
        row(f"{op} {dist} {nmax} {batch} {dtype}".replace("torch.", ""), fn, device, ab,
            args.rounds)
        padded = torch.eye(max_n, dtype=dtype, device=device).expand(batch, max_n, max_n).contiguous()
        if ab is None:
            row(f"  cholesky_ex padded [{batch}, {max_n}, {max_n}]",
                lambda: torch.linalg.cholesky_ex(padded), device)


if __name__ == "__main__":
    main()
