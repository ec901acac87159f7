// The CUDA built-ins lda.cu uses, for compiling it as C++ on the CPU: a
// block's threads run as std::threads meeting at a std::barrier in kernels
// that synchronise (one after another in those that do not), blocks one
// after another; a warp's 32 threads meet at a barrier of their own for
// every shuffle or ballot, which exchange values through a per-warp array; static shared memory is a static variable, which is safe
// because blocks never overlap. Doubles are IEEE with no contraction, as
// lda.cu's _rn intrinsics are on the GPU: cgo builds for the x86-64
// baseline, which has no FMA instruction to contract into.
#ifndef LDAEMU_SHIM_H
#define LDAEMU_SHIM_H
#include <barrier>
#include <cmath>

struct emu_uint3 {
    unsigned x, y, z;
};
static thread_local emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
static thread_local std::barrier<> *emu_barrier, *emu_warp_barrier;
static thread_local unsigned long long *emu_warp_xchg;
static unsigned char *emu_dynamic_shared;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(threads, blocks)
#define __shared__ static
#define LDA_DYNAMIC_SHARED(type, name) type *name = (type *)emu_dynamic_shared

static inline void __syncthreads()
{
    if (emu_barrier)
        emu_barrier->arrive_and_wait();
}
// emu_exchange publishes v for the warp and returns lane src's value.
static inline unsigned long long emu_exchange(unsigned long long v, unsigned src)
{
    const unsigned lane = threadIdx.x & 31;
    emu_warp_xchg[lane] = v;
    emu_warp_barrier->arrive_and_wait();
    const unsigned long long r = emu_warp_xchg[src & 31];
    emu_warp_barrier->arrive_and_wait();
    return r;
}
static inline unsigned __shfl_sync(unsigned, unsigned v, int src) { return (unsigned)emu_exchange(v, (unsigned)src); }
static inline unsigned __shfl_xor_sync(unsigned, unsigned v, int mask)
{
    return (unsigned)emu_exchange(v, (threadIdx.x & 31) ^ (unsigned)mask);
}
static inline unsigned __shfl_up_sync(unsigned, unsigned v, unsigned delta)
{
    const unsigned lane = threadIdx.x & 31;
    return (unsigned)emu_exchange(v, lane >= delta ? lane - delta : lane);
}
static inline unsigned __ballot_sync(unsigned, int pred)
{
    const unsigned lane = threadIdx.x & 31;
    emu_warp_xchg[lane] = pred != 0;
    emu_warp_barrier->arrive_and_wait();
    unsigned m = 0;
    for (unsigned i = 0; i < 32; i++)
        m |= (unsigned)emu_warp_xchg[i] << i;
    emu_warp_barrier->arrive_and_wait();
    return m;
}
static inline unsigned __reduce_or_sync(unsigned, unsigned v)
{
    const unsigned lane = threadIdx.x & 31;
    emu_warp_xchg[lane] = v;
    emu_warp_barrier->arrive_and_wait();
    unsigned m = 0;
    for (unsigned i = 0; i < 32; i++)
        m |= (unsigned)emu_warp_xchg[i];
    emu_warp_barrier->arrive_and_wait();
    return m;
}
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
using std::frexp;
using std::ldexp;
using std::lgamma;
#endif
