// The CUDA built-ins ri.cu uses, for compiling it as C++ on the CPU: a
// block's threads run as coroutines that yield at barriers (__syncthreads
// and groups' named barriers) where a kernel synchronises (one after
// another where it never does), blocks one after another; shared memory is
// static, as blocks never overlap. Floating point is IEEE with no contraction, as the _rn
// intrinsics are on the GPU: the x86-64 baseline cgo builds for has no
// FMA instruction to contract into.
#ifndef RIEMU_SHIM_H
#define RIEMU_SHIM_H
#include <algorithm>
#include <cmath>
#include <ucontext.h>

struct emu_uint3 {
    unsigned x, y, z;
};
static emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
// The running coroutine, the scheduler it yields to, and whether it
// returned (rather than reached a barrier).
static ucontext_t *emu_self, *emu_sched;
static bool emu_returned;
static unsigned char *emu_dynamic_shared;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define RI_SHARED_ARRAY(type, name) type *name = (type *)emu_dynamic_shared

// Barriers count arrivals (id 0 is __syncthreads', 1-15 a group's named
// barrier of n threads): a thread yields until the barrier's generation
// moves on, so groups of a block may pass different numbers of barriers.
// emu_events counts arrivals (and launch counts returns): a round of the
// scheduler without one is a deadlock.
static unsigned emu_bar_count[16], emu_bar_gen[16];
static unsigned long emu_events;
static inline void emu_barrier(unsigned id, unsigned n)
{
    const unsigned gen = emu_bar_gen[id];
    emu_events++;
    if (++emu_bar_count[id] == n) {
        emu_bar_count[id] = 0;
        emu_bar_gen[id]++;
    }
    do
        swapcontext(emu_self, emu_sched);
    while (emu_bar_gen[id] == gen);
}
static inline void __syncthreads() { emu_barrier(0, blockDim.x); }
#define RI_GROUP_SYNC(id, n) emu_barrier(id, n)
#define RI_LOAD_GLOBAL4(p) (*(const riF4 *)(p))
#define RI_LOAD_SHARED4(p) (*(const riF4 *)(p))
static inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return std::sqrt(a); }
static inline float __double2float_rn(double a) { return (float)a; }
static inline float __ldg(const float *p) { return *p; }
using std::min;
#endif
