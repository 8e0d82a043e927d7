#!/usr/bin/env bash
# Device-tool calls; each mode fits one 10-minute call, and a warm machine keeps the build.
#   kernels: potrf/posv correctness sweep and timings (tools/gpu_potrf_check.py), the potrf
#            and posv tuning sweeps (benchmarks/tune_*.py), bench_fixed for posv
#   tests:   the CUDA test cases (pytest -m cuda); FILES="tests/x.py ..." narrows them
#   checks:  the trsm GPU sweep, compute-sanitizer memcheck and racecheck, the SASS scan
#            of tools/check_sass_descriptors.py, and the CPU test cases under this
#            machine's torch version
#   solves:  the trsm/potrs GPU sweep (tools/gpu_check_trsm.py) and benchmarks/tune_trsm.py
#   bench:   bench_fixed (every op, the sweep)
#   bench-vbatched: bench_vbatched
#   bench-vbatched-solves: bench_vbatched_solves (potrs / trsm_vbatched)
# Several modes run in order: bash tools/gpu_session.sh kernels tests
# Carry .whl (`make device-wheels` fills it) for the pytest plugins and expecttest.
# Logs and results go to $OUT; every step has its own time limit.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start ))s] $*"; }
if ! python3 -c "import torch_batchchol" 2>/dev/null || [ -n "${REBUILD:-}" ]; then
  stamp build
  TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
fi
python3 -c "import torch, torch_batchchol as t; print(torch.__version__, torch.cuda.get_device_name(), t.cuda_kernels_built())"
for what in "${@:-tests}"; do
  case "$what" in
  kernels)
    stamp check
    timeout ${CHECK_LIMIT:-240} python3 tools/gpu_potrf_check.py > "$OUT/potrf_check.txt" 2>&1
    grep -E "FAIL|failures" "$OUT/potrf_check.txt" | head -30; sed -n '/copy bandwidth/,$p' "$OUT/potrf_check.txt"
    stamp tune
    timeout ${TUNE_LIMIT:-150} python3 benchmarks/tune_potrf.py --sizes ${TUNE_SIZES:-4 8 16 24 32 48 64} \
      --json "$OUT/tune_potrf.json" > "$OUT/tune_potrf.txt" 2>&1; cat "$OUT/tune_potrf.txt"
    stamp tune-posv
    timeout ${TUNE_POSV_LIMIT:-120} python3 benchmarks/tune_posv.py --json "$OUT/tune_posv.json" \
      > "$OUT/tune_posv.txt" 2>&1; cat "$OUT/tune_posv.txt"
    stamp bench-posv
    timeout ${POSV_LIMIT:-150} python3 benchmarks/bench_fixed.py --ops posv --reps 10 \
      --json "$OUT/bench_posv.json" > "$OUT/bench_posv.txt" 2>"$OUT/bench_posv_progress.txt"
    cat "$OUT/bench_posv.txt"
    ;;
  tests)
    stamp pytest-cuda
    # Each worker's torch would otherwise start one CPU thread per core for the float64
    # references: 12 workers x 16 threads on 16 cores made every case ~100x slower.
    export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
    timeout ${PYTEST_LIMIT:-400} python3 -m pytest ${FILES:-tests} -q -m cuda -p no:cacheprovider \
      -n ${WORKERS:-12} --timeout=${TEST_TIMEOUT:-120} -rfE --tb=short --durations=15 2>&1 \
      | grep -v "Extension modules\|PytestBenchmarkWarning\|warner(" > "$OUT/pytest_cuda.txt"
    grep -E "^(FAILED|ERROR)" "$OUT/pytest_cuda.txt" | head -40; tail -22 "$OUT/pytest_cuda.txt"
    unset OMP_NUM_THREADS MKL_NUM_THREADS
    ;;
  checks)
    stamp checks
    timeout 60 python3 tools/gpu_check_trsm.py --no-bench > "$OUT/trsm_check.txt" 2>&1; tail -8 "$OUT/trsm_check.txt"
    stamp sanitizers
    timeout 150 compute-sanitizer --tool memcheck --print-limit 20 python3 tools/sanitize_ops.py > "$OUT/memcheck.txt" 2>&1; tail -4 "$OUT/memcheck.txt"
    timeout 200 compute-sanitizer --tool racecheck --print-limit 20 python3 tools/sanitize_ops.py --quick > "$OUT/racecheck.txt" 2>&1; tail -4 "$OUT/racecheck.txt"
    stamp sass-descriptors
    timeout 300 python3 tools/check_sass_descriptors.py > "$OUT/sass_check.txt" 2>&1
    echo "rc=$?" >> "$OUT/sass_check.txt"; head -8 "$OUT/sass_check.txt"
    stamp pytest-cpu
    OMP_NUM_THREADS=1 timeout 120 python3 -m pytest tests -q -m "not cuda" -p no:cacheprovider -n 12 2>&1 | tail -30 > "$OUT/pytest_cpu.txt"; tail -8 "$OUT/pytest_cpu.txt"
    ;;
  solves)
    stamp trsm-check
    timeout 120 python3 tools/gpu_check_trsm.py --no-bench > "$OUT/trsm_check.txt" 2>&1; tail -8 "$OUT/trsm_check.txt"
    stamp tune-trsm
    timeout ${TUNE_TRSM_LIMIT:-240} python3 benchmarks/tune_trsm.py ${TUNE_TRSM_ARGS:-} --json "$OUT/tune_trsm.json" \
      > "$OUT/tune_trsm.txt" 2>&1; cat "$OUT/tune_trsm.txt"
    ;;
  bench)
    stamp bench
    timeout ${BENCH_LIMIT:-420} python3 benchmarks/bench_fixed.py ${BENCH_ARGS:-} --json "$OUT/bench_fixed.json" \
      --plot "$OUT/bench_fixed.png" > "$OUT/bench_fixed.txt" 2>"$OUT/bench_progress.txt"
    cat "$OUT/bench_fixed.txt"; tail -3 "$OUT/bench_progress.txt"
    ;;
  bench-vbatched)
    stamp bench-vbatched
    timeout ${VB_LIMIT:-480} python3 benchmarks/bench_vbatched.py ${VB_ARGS:-} --json "$OUT/bench_vbatched.json" \
      --plot "$OUT/bench_vbatched.png" > "$OUT/bench_vbatched.txt" 2>"$OUT/bench_vbatched_progress.txt"
    cat "$OUT/bench_vbatched.txt"; tail -3 "$OUT/bench_vbatched_progress.txt"
    ;;
  bench-vbatched-solves)
    stamp bench-vbatched-solves
    timeout ${VBS_LIMIT:-300} python3 benchmarks/bench_vbatched_solves.py ${VBS_ARGS:-} \
      --json "$OUT/bench_vbatched_solves.json" --plot "$OUT/bench_vbatched_solves.png" \
      > "$OUT/bench_vbatched_solves.txt" 2>"$OUT/bench_vbatched_solves_progress.txt"
    cat "$OUT/bench_vbatched_solves.txt"; tail -3 "$OUT/bench_vbatched_solves_progress.txt"
    ;;
  *) echo "unknown mode $what" ;;
  esac
done
stamp done
