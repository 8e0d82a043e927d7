# Builds the extension (unless it imports) and writes ncu summaries (launch, occupancy,
# warp states and stall reasons, speed of light, schedulers, memory, shared-memory
# wavefronts) of one call of each case to $OUT/ncu.txt, for a device-tool call:
#   bash tools/ncu_round.sh [KERNEL_REGEX:OP:DTYPE:N:K[:BATCH] ...]
# (cases: tools/ncu_solve_case.py's shapes; without arguments, the twenty-ninth round's
# list below).
set -u
OUT=${OUT:-/tmp/out}
start=$(date +%s)
if ! python3 -c "import torch_batchchol" 2>/dev/null; then
  TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  echo "built in $(( $(date +%s) - start )) s"
fi
S="--section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight --section SchedulerStats --section MemoryWorkloadAnalysis"
M="--metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed.sum"
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(trsm_warp_kernel:trsm:float64:256:16 trsm_block_kernel:potrs:float64:128:16
  potrf_tile_kernel:potrf:float64:128:0 potrf_wide_kernel:potrf:float64:64:0
  potrf_warp_kernel:potrf:float64:32:0:32768 posv_warp:posv:float64:32:1:100000)
for c in "${cases[@]}"; do
  IFS=: read -r name op dt n k batch <<< "$c"
  echo "=== $name: $op $dt $n $k ${batch:-}" >> "$OUT/ncu.txt"
  timeout 150 ncu --clock-control none --kernel-name "regex:$name" --launch-skip 2 --launch-count 1 $S $M \
    python3 tools/ncu_solve_case.py "$op" "$dt" "$n" "$k" ${batch:-} >> "$OUT/ncu.txt" 2>&1
done
echo "done in $(( $(date +%s) - start )) s"
grep -E "^===|Duration|Registers Per|Achieved Occupancy|L1/TEX Cache Throughput|DRAM Throughput|Issued Warp|Warp Cycles Per Issued|stalled_.*ratio +[0-9.]*[1-9]|wavefronts|bank_conflicts|t_requests|inst_executed.sum" "$OUT/ncu.txt" | awk '{ if ($0 ~ /stalled/ && $NF+0 < 0.3) next; print }'
