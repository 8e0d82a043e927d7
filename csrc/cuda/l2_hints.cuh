// Copies of data read once, marked evict-first in L2 (sm_80 and later: createpolicy +
// .L2::cache_hint; plain copies elsewhere), so that the lines read again stay in L2.
//
// Why: a warp solve re-reads its solved rows for every row block below them while the
// matrix streams through L2 once; the matrix's lines evicted those rows between their
// store and their re-reads (ncu, H100, float64 trsm n = 256 with 16 columns: L2 hit
// rate 9%, 4.4 GB from DRAM for 3.3 GB of matrix, right-hand sides and solution).
// Keeping the rows by evict_last instead did nothing (H200, 2026-11-27): evict_last is
// the "persisting" property, which acts only in an L2 set-aside
// (cudaLimitPersistingL2CacheSize: 0 by default, and device-wide, not a library's to set).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace batchchol {
namespace cuda {

__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t pol = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
  return pol;
}

// cp_async_elem with the policy, for elements that are all read (no source size).
// Check the SASS of every new caller (tools/check_sass_descriptors.py): ptxas 13.0 may
// fold a uniform offset into the shared address of these copies (LDGSTS [R + UR0],
// desc[UR1]: an odd descriptor register), which faults as an illegal instruction (H200;
// most likely also the Xid 13, "Illegal Instruction Parameter", of the twenty-ninth
// round's hinted copies with a source size on an H100). trsm_issue_tile calls it only
// where every shared address is computed per lane, as trsm_issue_rows does for
// cp_async_16_l2.
template <typename T>
__device__ __forceinline__ void cp_async_elem_l2(T* smem, const T* gmem, uint64_t pol) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async.ca copies 4 or 8 bytes here");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], %2, %3;\n" ::"r"(s),
               "l"(gmem), "n"(int(sizeof(T))), "l"(pol)
               : "memory");
#else
  (void)pol;
  *smem = *gmem;
#endif
}

// The 16-byte form (cp.async.cg, the L1-bypassing copy that 16 bytes allow); the same
// SASS check applies.
__device__ __forceinline__ void cp_async_16_l2(void* smem, const void* gmem, uint64_t pol) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n" ::"r"(s),
               "l"(gmem), "l"(pol)
               : "memory");
#else
  (void)pol;
  *static_cast<uint4*>(smem) = *static_cast<const uint4*>(gmem);
#endif
}

}  // namespace cuda
}  // namespace batchchol
