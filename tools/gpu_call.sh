#!/usr/bin/env bash
# One device call: build, one slow-looking CUDA test alone (is it the test or the
# contention?), the ragged-batch CUDA tests, then the ragged benchmark.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
start=$(date +%s); stamp() { echo "[$(( $(date +%s) - start ))s] $*"; }
stamp build
TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
stamp single-test
timeout 40 python3 -m pytest "tests/test_potrf.py::test_potrf_matches_torch[cuda-True-128-dtype2]" \
  -q -p no:cacheprovider --durations=3 --durations-min=0 2>&1 | tail -6
stamp vbatched-tests
timeout ${VT_LIMIT:-120} python3 -m pytest tests/test_vbatched.py tests/test_vbatched_bad_input.py tests/test_nested.py \
  -q -m cuda -p no:cacheprovider -n 12 --timeout=60 -rfE --tb=short > "$OUT/pytest_vbatched.txt" 2>&1
grep -E "^(FAILED|ERROR)|passed|failed" "$OUT/pytest_vbatched.txt" | tail -25
stamp bench-vbatched
timeout ${VB_LIMIT:-90} python3 benchmarks/bench_vbatched.py --batches 5000 --reps 5 --json "$OUT/bench_vbatched.json" \
  --plot "$OUT/bench_vbatched.png" > "$OUT/bench_vbatched.txt" 2>"$OUT/bench_vbatched_progress.txt"
cat "$OUT/bench_vbatched.txt"; tail -2 "$OUT/bench_vbatched_progress.txt"
stamp done
