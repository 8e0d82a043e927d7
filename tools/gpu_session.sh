#!/usr/bin/env bash
# Device-tool calls (each fits one 10-minute call; a warm machine keeps the build):
#   tests:  the CUDA test cases (pytest -m cuda); PART=1 or PART=2 runs one half of
#           the test files (the whole CUDA suite needs more than one call)
#   checks: the potrf/trsm GPU sweeps, compute-sanitizer memcheck and racecheck, and the
#           CPU test cases under this machine's torch version
#   bench:  the benchmark and the potrf tuning sweep
#   bench-solves: bench_fixed for potrs / posv / trsm, then bench_vbatched
# Logs and results go to $OUT; each step has its own time limit.
#   bash tools/gpu_session.sh tests|checks|bench
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
what=${1:-tests}
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start ))s] $*"; }
if ! python3 -c "import torch_batchchol" 2>/dev/null; then
  stamp build
  TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
fi
python3 -c "import torch, torch_batchchol as t; print(torch.__version__, torch.cuda.get_device_name(), t.cuda_kernels_built())"
if [ "$what" = tests ]; then
  stamp pytest-cuda
  # --timeout: a stuck test fails with its traceback instead of eating the call.
  # Few workers: 8-16 processes sharing one GPU made each case ~100x slower than alone
  # (2026-11-22, H100); WORKERS overrides.
  case "${PART:-all}" in
    1) files="tests/test_autograd.py tests/test_bad_input.py tests/test_compile.py tests/test_cuda_graph.py tests/test_linalg_api.py tests/test_nested.py tests/test_opcheck.py" ;;
    2) files="tests/test_posv.py tests/test_potrf.py tests/test_potrs.py tests/test_pytorch_samples.py tests/test_trsm.py tests/test_vbatched.py tests/test_vbatched_bad_input.py tests/test_demo.py" ;;
    *) files=tests ;;
  esac
  timeout ${PYTEST_LIMIT:-330} python3 -m pytest $files -q -m cuda -p no:cacheprovider -n ${WORKERS:-4} \
    --timeout=${TEST_TIMEOUT:-45} --durations=30 2>&1 \
    | grep -v "^  File\|Extension modules\|PytestBenchmarkWarning\|warner(" > "$OUT/pytest_cuda.txt"
  tail -70 "$OUT/pytest_cuda.txt"
fi
if [ "$what" = checks ]; then
  stamp checks
  timeout 150 python3 tools/gpu_potrf_check.py > "$OUT/potrf_check.txt" 2>&1; tail -20 "$OUT/potrf_check.txt"
  timeout 60 python3 tools/gpu_check_trsm.py --no-bench > "$OUT/trsm_check.txt" 2>&1; tail -8 "$OUT/trsm_check.txt"
  stamp sanitizers
  timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 tools/sanitize_ops.py > "$OUT/memcheck.txt" 2>&1; tail -4 "$OUT/memcheck.txt"
  timeout 60 compute-sanitizer --tool racecheck --print-limit 20 python3 tools/sanitize_ops.py --quick > "$OUT/racecheck.txt" 2>&1; tail -4 "$OUT/racecheck.txt"
  stamp pytest-cpu
  timeout 120 python3 -m pytest tests -q -m "not cuda" -p no:cacheprovider -n 8 2>&1 | tail -30 > "$OUT/pytest_cpu.txt"; tail -8 "$OUT/pytest_cpu.txt"
fi
if [ "$what" = bench ]; then
  stamp bench
  timeout 380 python3 benchmarks/bench_fixed.py --json "$OUT/bench_fixed.json" --plot "$OUT/bench_fixed.png" > "$OUT/bench_fixed.txt" 2>"$OUT/bench_progress.txt"; cat "$OUT/bench_fixed.txt"
  stamp tune
  timeout 90 python3 benchmarks/tune_potrf.py --json "$OUT/tune_potrf.json" > "$OUT/tune_potrf.txt" 2>&1; cat "$OUT/tune_potrf.txt"
fi
if [ "$what" = bench-solves ]; then
  stamp bench-solves
  timeout ${SOLVES_LIMIT:-200} python3 benchmarks/bench_fixed.py --ops potrs,posv,trsm --reps 10 \
    --json "$OUT/bench_solves.json" --plot "$OUT/bench_solves.png" > "$OUT/bench_solves.txt" 2>"$OUT/bench_solves_progress.txt"
  cat "$OUT/bench_solves.txt"
  stamp bench-vbatched
  timeout ${VB_LIMIT:-240} python3 benchmarks/bench_vbatched.py --json "$OUT/bench_vbatched.json" \
    --plot "$OUT/bench_vbatched.png" > "$OUT/bench_vbatched.txt" 2>"$OUT/bench_vbatched_progress.txt"
  cat "$OUT/bench_vbatched.txt"; tail -3 "$OUT/bench_vbatched_progress.txt"
fi
stamp done
