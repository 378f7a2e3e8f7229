// A function marked NBODY_WIDE_CLONES is compiled twice where GCC targets x86-64, for AVX2 and for
// the base ISA, and the loader picks the one this CPU runs: 8 float or 4 double lanes to a register
// instead of 4 or 2, the same operations in the same order, so the same bits (AVX2 alone forms no
// fused multiply-add). The lane loops it calls must be inlined into it (always_inline) to be widened.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NBODY_WIDE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NBODY_WIDE_CLONES
#endif
