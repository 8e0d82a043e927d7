"""Timing, roofline, JSON and plotting helpers shared by the benchmarks.

The roofline follows DESIGN-NOTES section 2: t_roof = max(bytes / copy_bandwidth,
flops / peak_flops), with the copy bandwidth measured in the same run by cloning
a large buffer (bytes read + written over time).
"""

import contextlib
import json
import math
import os
import platform
import statistics
import sys
import time

import torch

# H100/H200 SXM data sheet: 67 TFLOP/s fp32 FMA and fp64 with tensor cores.
# BATCHCHOL_PEAK_TFLOPS overrides it for other cards.
GPU_PEAK_FLOPS = float(os.environ.get("BATCHCHOL_PEAK_TFLOPS", "67")) * 1e12


def log(msg):
    """Progress goes to stderr so that stdout stays a clean table."""
    print(msg, file=sys.stderr, flush=True)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def cache_bytes(device):
    """Last-level cache size: inputs smaller than a few of these get rotated."""
    if device.type == "cuda":
        return getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 << 20)
    return 64 << 20  # a generous guess at a server CPU's L3


def rotation_count(bytes_per_set, device, cap=16):
    """How many input copies keep each call from finding its data in cache."""
    if bytes_per_set <= 0:
        return 1
    return max(1, min(cap, math.ceil(3 * cache_bytes(device) / bytes_per_set)))


def time_ms(fn, n_sets, device, warmup=3, reps=20, budget_ms=2000.0):
    """Median time in ms of fn(i) over reps calls, cycling i over n_sets input sets.

    Each call is timed alone (CUDA events on the GPU), so the median is robust to
    the odd slow call; reps shrink for slow calls to keep each point under
    about budget_ms.
    """
    for i in range(warmup):
        fn(i % n_sets)
    sync(device)
    times = []
    i = 0
    while True:
        if device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn(i % n_sets)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t0 = time.perf_counter()
            fn(i % n_sets)
            times.append((time.perf_counter() - t0) * 1e3)
        i += 1
        if i >= reps or (i >= 3 and sum(times) > budget_ms):
            break
    return statistics.median(times)


def median_ms(fn):
    """Median CUDA time of fn() (the tuning scripts' timer: 3 warm-ups, 15 repetitions)."""
    return time_ms(lambda i: fn(), 1, torch.device("cuda"), warmup=3, reps=15)


@contextlib.contextmanager
def environ(env):
    """The environment variables of env set for the duration of a block (the library
    reads its switches at every call), restored afterwards."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def median_ms_with_env(env, fn):
    """median_ms(fn) with the environment variables of env set."""
    with environ(env):
        return median_ms(fn)


def spd_batch(batch, n, dtype, device="cuda"):
    """A batch of well-conditioned SPD (HPD) matrices for the tuning sweeps."""
    X = torch.randn(batch, n, n, dtype=dtype, device=device)
    return X @ X.mH / n + torch.eye(n, dtype=dtype, device=device)


def batch_for_bytes(n, dtype, nbytes=256 << 20, minimum=10_000):
    """Enough n x n matrices to hold nbytes (small batches do not reach steady state)."""
    elsize = torch.empty((), dtype=dtype).element_size()
    return max(minimum, -(-nbytes // (n * n * elsize)))


def copy_bandwidth(device, nbytes=None):
    """Bytes per second of a large clone, counting bytes read plus bytes written."""
    if nbytes is None:
        nbytes = (1 << 30) if device.type == "cuda" else (256 << 20)
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    ms = time_ms(lambda _: src.clone(), 1, device, warmup=2, reps=10)
    del src
    return 2 * nbytes / (ms * 1e-3)


def peak_flops(device, dtype):
    """Peak flop/s: the data sheet on the GPU, a measured matmul rate on the CPU."""
    if device.type == "cuda":
        return GPU_PEAK_FLOPS
    n = 1024
    a = torch.randn(n, n, dtype=dtype)
    ms = time_ms(lambda _: a @ a, 1, device, warmup=1, reps=5)
    return 2 * n**3 / (ms * 1e-3)


def roofline_ms(nbytes, flops, bandwidth, peak):
    return max(nbytes / bandwidth, flops / peak) * 1e3


@contextlib.contextmanager
def linalg_backend(name):
    """torch.backends.cuda.preferred_linalg_library(name) for the duration of a block."""
    if name is None:
        yield
        return
    previous = torch.backends.cuda.preferred_linalg_library()
    torch.backends.cuda.preferred_linalg_library(name)
    try:
        yield
    finally:
        torch.backends.cuda.preferred_linalg_library(previous)


def environment(device):
    env = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": str(device),
        "threads": torch.get_num_threads(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(gpu=props.name, sms=props.multi_processor_count, cuda=torch.version.cuda)
    else:
        env.update(cpu=platform.processor() or platform.machine())
    return env


def write_json(path, env, machine, records):
    with open(path, "w") as f:
        json.dump({"env": env, "machine": machine, "results": records}, f, indent=1)
    log(f"wrote {path}")


def write_tuning_json(path, rows):
    """The tuning scripts' output: the GPU's name and one dict per timed point."""
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    log(f"wrote {path}")


def format_table(title, columns, rows):
    """columns: [(header, width, format)]; rows: lists of values (None prints '-')."""
    head = "".join(f"{h:>{w}}" for h, w, _ in columns)
    lines = [title, head, "-" * len(head)]
    for row in rows:
        cells = []
        for (_, w, fmt), v in zip(columns, row):
            cells.append(f"{'-':>{w}}" if v is None else f"{v:>{w}{fmt}}")
        lines.append("".join(cells))
    return "\n".join(lines)


def plot(path, records):
    """Speedup over the best competitor (top) and fraction of the roofline (bottom)
    against n, one column per op, one line per (dtype, nrhs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = list(dict.fromkeys(r["op"] for r in records))
    fig, axes = plt.subplots(2, len(ops), figsize=(4.2 * len(ops), 7), squeeze=False)
    for col, op in enumerate(ops):
        series = {}
        for r in records:
            if r["op"] == op and r["ours_ms"] is not None:
                series.setdefault((r["dtype"], r["nrhs"]), []).append(r)
        for (dtype, nrhs), rs in sorted(series.items()):
            rs.sort(key=lambda r: r["n"])
            label = f"{dtype}" + (f", {nrhs} rhs" if op != "potrf" else "")
            ns = [r["n"] for r in rs]
            axes[0][col].plot(ns, [r["speedup"] or float("nan") for r in rs], "o-", label=label)
            axes[1][col].plot(ns, [r["roof_fraction"] for r in rs], "o-", label=label)
        for row, ylabel in ((0, "speedup vs best torch"), (1, "fraction of roofline")):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][col].set_title(op)
        axes[0][col].set_yscale("log")  # speedups span orders of magnitude
        axes[0][col].axhline(1.0, color="gray", lw=0.8)
        axes[1][col].set_ylim(bottom=0)
        axes[0][col].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    log(f"wrote {path}")
