// The CUDA declarations ri.cu needs, for checking it with clang's CUDA
// front end where no CUDA toolkit is installed (clang -x cuda -nocudainc
// -nocudalib): the built-in variables come with clang; the intrinsics map
// to the NVVM built-ins nvcc's headers also use.
#include <__clang_cuda_builtin_vars.h>
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict

static __device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
static __device__ __forceinline__ double __dadd_rn(double a, double b) { return __nvvm_add_rn_d(a, b); }
static __device__ __forceinline__ double __dmul_rn(double a, double b) { return __nvvm_mul_rn_d(a, b); }
static __device__ __forceinline__ double __ddiv_rn(double a, double b) { return __nvvm_div_rn_d(a, b); }
static __device__ __forceinline__ double __dsqrt_rn(double a) { return __nvvm_sqrt_rn_d(a); }
static __device__ __forceinline__ float __double2float_rn(double a) { return __nvvm_d2f_rn(a); }
static __device__ __forceinline__ float __ldg(const float *p) { return __nvvm_ldg_f(p); }
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
