# Builds the extension and writes ncu summaries (launch, occupancy, warp states, speed of
# light, schedulers, memory) of one call of each kernel below to $OUT/ncu.txt, for a
# device-tool call:  bash tools/ncu_round.sh   (cases: tools/ncu_solve_case.py's shapes)
set -u
OUT=${OUT:-/tmp/out}
start=$(date +%s)
TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 python3 -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
S="--section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight --section SchedulerStats --section MemoryWorkloadAnalysis"
run() { name=$1; shift; echo "=== $name: $*" >> $OUT/ncu.txt; timeout 120 ncu --clock-control none --kernel-name regex:$name --launch-skip 2 --launch-count 1 $S python3 tools/ncu_solve_case.py "$@" >> $OUT/ncu.txt 2>&1; }
run trsm_warp_kernel trsm float64 256 16
run trsm_block_kernel potrs float64 128 16
run potrf_tile_kernel potrf float64 128 0
run potrf_wide_kernel potrf float64 64 0
run potrf_warp_kernel potrf float64 32 0 32768
run posv_warp posv float64 32 1 100000
echo "done in $(( $(date +%s) - start )) s"
grep -E "^===|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Memory Throughput|DRAM Throughput|Eligible Warps|Issued Warp|No Eligible|Warp Cycles Per Issued|Dynamic Shared" $OUT/ncu.txt
