// The CUDA built-ins w2v.cu uses, for compiling it as C++ on the CPU: a
// block's threads run as std::threads, blocks one after another; a warp's
// 32 threads meet at a std::barrier for every shuffle (which exchanges
// values through a per-warp array) and the block's threads at another for
// __syncthreads. Shared memory starts as NaN bytes, so a read before a
// write shows. Floating point is IEEE with no contraction, as the _rn
// intrinsics are on the GPU: the x86-64 baseline cgo builds for has no FMA
// instruction to contract into.
#ifndef W2VEMU_SHIM_H
#define W2VEMU_SHIM_H
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstring>

struct emu_uint3 {
    unsigned x, y, z;
};
static thread_local emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
static thread_local std::barrier<> *emu_block_barrier, *emu_warp_barrier;
static thread_local float *emu_warp_xchg;
static thread_local unsigned *emu_warp_ixchg;
static thread_local unsigned char *emu_dynamic_shared;

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define W2V_SHARED_ARRAY(type, name) type *name = (type *)emu_dynamic_shared

static inline void __syncthreads() { emu_block_barrier->arrive_and_wait(); }

static inline float __shfl_xor_sync(unsigned, float v, int mask)
{
    const unsigned lane = threadIdx.x & 31;
    emu_warp_xchg[lane] = v;
    emu_warp_barrier->arrive_and_wait();
    const float r = emu_warp_xchg[lane ^ (unsigned)mask];
    emu_warp_barrier->arrive_and_wait();
    return r;
}

// __shfl_down_sync: lane l gets lane l+delta's value within its segment
// of width lanes, or keeps its own past the segment's end.
static inline float __shfl_down_sync(unsigned, float v, unsigned delta, int width = 32)
{
    const unsigned lane = threadIdx.x & 31;
    emu_warp_xchg[lane] = v;
    emu_warp_barrier->arrive_and_wait();
    const float r = (lane % (unsigned)width) + delta < (unsigned)width ? emu_warp_xchg[lane + delta] : v;
    emu_warp_barrier->arrive_and_wait();
    return r;
}

static inline void __syncwarp(unsigned = 0xffffffffu) { emu_warp_barrier->arrive_and_wait(); }

static inline float __int_as_float(int x)
{
    float f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

static inline unsigned __ballot_sync(unsigned, int pred)
{
    const unsigned lane = threadIdx.x & 31;
    emu_warp_ixchg[lane] = pred ? 1u : 0u;
    emu_warp_barrier->arrive_and_wait();
    unsigned m = 0;
    for (unsigned j = 0; j < 32; j++)
        m |= emu_warp_ixchg[j] << j;
    emu_warp_barrier->arrive_and_wait();
    return m;
}

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }

static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
template <class T> static inline T __ldg(const T *p) { return *p; }

// Global rows are shared by concurrent sentences: atomic accesses, as the
// GPU's L2 makes them.
static inline float emu_ldcg(const float *p)
{
    float v;
    __atomic_load(const_cast<float *>(p), &v, __ATOMIC_RELAXED);
    return v;
}
static inline float atomicAdd(float *p, float v)
{
    float old, sum;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do {
        sum = old + v;
    } while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
#define W2V_LDCG(p) emu_ldcg(p)
using std::max;
using std::min;
#endif
