// The CUDA declarations w2v.cu needs, for checking it with clang's CUDA
// front end where no CUDA toolkit is installed (clang -x cuda -nocudainc
// -nocudalib): the built-in variables come with clang; the intrinsics map
// to the NVVM built-ins nvcc's headers also use.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>

static __device__ __forceinline__ float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
static __device__ __forceinline__ float __fsub_rn(float a, float b) { return __nvvm_add_rn_f(a, -b); }
static __device__ __forceinline__ float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
static __device__ __forceinline__ float __shfl_xor_sync(unsigned m, float v, int lane)
{
    return __nvvm_shfl_sync_bfly_f32(m, v, lane, 0x1f);
}
static __device__ __forceinline__ float __shfl_down_sync(unsigned m, float v, unsigned delta, int width = 32)
{
    return __nvvm_shfl_sync_down_f32(m, v, delta, ((32 - width) << 8) | 0x1f);
}
static __device__ __forceinline__ void __syncwarp(unsigned m = 0xffffffffu) { __nvvm_bar_warp_sync(m); }
static __device__ __forceinline__ float __int_as_float(int x) { return __nvvm_bitcast_i2f(x); }
static __device__ __forceinline__ int __ldg(const int *p) { return __nvvm_ldg_i(p); }
static __device__ __forceinline__ unsigned long long __ldg(const unsigned long long *p) { return __nvvm_ldg_ull(p); }
static __device__ __forceinline__ unsigned __umulhi(unsigned a, unsigned b) { return __nvvm_mulhi_ui(a, b); }
static __device__ __forceinline__ int __popc(unsigned x) { return __builtin_popcount(x); }
static __device__ __forceinline__ unsigned __ballot_sync(unsigned m, bool p) { return __nvvm_vote_ballot_sync(m, p); }
static __device__ __forceinline__ unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __nvvm_atom_add_gen_ll((long long *)p, (long long)v);
}
static __device__ __forceinline__ float __ldg(const float *p) { return __nvvm_ldg_f(p); }
static __device__ __forceinline__ float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
typedef __SIZE_TYPE__ size_t;
