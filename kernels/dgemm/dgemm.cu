// FP64 GEMM on the tensor cores, for GPUs where cuBLAS cannot be opened, plus
// the helpers the dgemm workload needs whichever GEMM runs: a counter-based
// random fill that Go reproduces bit for bit (so the host can compute any
// entry of A or B without a copy of the matrices) and a gather of sampled
// entries of C for verification.
//
// dgemm_nn computes C = alpha*A*B + beta*C for column-major A (MxK), B (KxN)
// and C (MxN), any M, N, K, with even leading dimensions (every column starts
// on a 16-byte boundary, so tiles move with 16-byte cp.async copies; the
// workload allocates with an even stride). As in BLAS, C is not read when
// beta is 0.
//
// Design: 128x128 block tiles, 256 threads (8 warps in a 2x4 arrangement,
// each warp a 64x32 sub-tile held in 64 FP64 accumulators per thread), K
// walked in steps of 32 through a 3-stage cp.async pipeline in dynamic shared
// memory (210 KiB, one block per SM). Shared tiles keep global memory's orientation (A as [k][m], B as
// [n][k]), each row padded by 4 doubles so that the fragment loads of a
// half-warp fall in 16 different 8-byte banks. Blocks are ordered in groups
// of 8 block-rows so concurrently running blocks share A and B panels in L2.
// Hopper (sm_90) issues DMMA with mma.sync m16n8k8 (PTX ISA 7.8); Ampere, and
// the compute_80 PTX any later GPU can JIT, uses m8n8k4 with the same tiling.
//
// Measured on the H100 80GB HBM3 at n=8192 (kernels/scripts/sweep.sh, nvcc
// 13.0, medians of 3; cuBLAS 13.1 ran 53-56 TFLOP/s in the same session):
// BK=16 with 4 stages 40.0 TFLOP/s, 3 stages 40.6; BK=24/4 stages 41.5;
// BK=32/3 stages 42.9 (the default: half the barriers per FLOP; ptxas uses
// 255 registers and spills 16 bytes); BK=32/2 stages 42.3; 4x2 warps or
// groups of 16 block-rows within noise of the default. The compute_80 PTX
// JIT-compiled on the H100 (m8n8k4) runs at 25.6.
//
// Regenerate the committed PTX and fatbin with kernels/scripts/gen.sh.

// Tile shape; scripts/sweep.sh builds variants by defining these.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef NSTAGE
#define NSTAGE 3
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#define NTHREADS 256
#define WM (BM / WARPS_M)                   // rows per warp
#define WN (BN / (NTHREADS / 32 / WARPS_M)) // columns per warp
#define PA (BM + 4)                         // shared stride of the A tile, stored [k][m]
#define QB (BK + 4)                         // shared stride of the B tile, stored [n][k]
#define A_DOUBLES (BK * PA)
#define STAGE_DOUBLES (A_DOUBLES + BN * QB)

// Dynamic shared memory dgemm_nn needs, and its block size; the host reads
// them from these globals rather than repeating the arithmetic.
extern "C" {
__device__ int dgemm_smem_bytes = NSTAGE * STAGE_DOUBLES * 8;
__device__ int dgemm_threads = NTHREADS;
__device__ int dgemm_tile_m = BM;
__device__ int dgemm_tile_n = BN;
}

__device__ __forceinline__ unsigned smemAddr(const void *p)
{
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// cpAsync16 copies bytes (16, 8 or 0) from global src to shared dst and
// zero-fills the rest of the 16-byte destination.
__device__ __forceinline__ void cpAsync16(unsigned dst, const void *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N> __device__ __forceinline__ void cpAsyncWait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// loadTile starts the copy of A[m0:m0+BM, k0:k0+BK] and B[k0:k0+BK, n0:n0+BN]
// into one pipeline stage; elements outside the matrices become zeros.
__device__ __forceinline__ void loadTile(double *sA, double *sB, const double *A,
                                         const double *B, int M, int N, int K, long long lda,
                                         long long ldb, int m0, int n0, int k0, int tid)
{
#pragma unroll
    for (int r = 0; r < BM * BK / 2 / NTHREADS; r++) {
        int c = tid + r * NTHREADS;
        int kk = c / (BM / 2), i = (c % (BM / 2)) * 2;
        int gm = m0 + i, gk = k0 + kk;
        int bytes = 0;
        const double *src = A;
        if (gk < K && gm < M) {
            bytes = gm + 1 < M ? 16 : 8;
            src = A + (long long)gk * lda + gm;
        }
        cpAsync16(smemAddr(sA + kk * PA + i), src, bytes);
    }
#pragma unroll
    for (int r = 0; r < BN * BK / 2 / NTHREADS; r++) {
        int c = tid + r * NTHREADS;
        int j = c / (BK / 2), kk = (c % (BK / 2)) * 2;
        int gn = n0 + j, gk = k0 + kk;
        int bytes = 0;
        const double *src = B;
        if (gn < N && gk < K) {
            bytes = gk + 1 < K ? 16 : 8;
            src = B + (long long)gn * ldb + gk;
        }
        cpAsync16(smemAddr(sB + j * QB + kk), src, bytes);
    }
}

// acc[mi][ni][e] is the warp's 16x8 tile (mi, ni); e follows the m16n8 FP64
// accumulator layout: rows g, g, g+8, g+8 and columns 2t, 2t+1, 2t, 2t+1 for
// lane = 4g + t.
__device__ __forceinline__ void computeStage(double (&acc)[WM / 16][WN / 8][4], const double *sA,
                                             const double *sB, int wm0, int wn0, int g, int t)
{
#if __CUDA_ARCH__ >= 900
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
        double a[WM / 16][4], b[WN / 8][2];
#pragma unroll
        for (int mi = 0; mi < WM / 16; mi++) {
            const double *p = sA + (kk + t) * PA + wm0 + mi * 16 + g;
            a[mi][0] = p[0];
            a[mi][1] = p[8];
            a[mi][2] = p[4 * PA];
            a[mi][3] = p[4 * PA + 8];
        }
#pragma unroll
        for (int ni = 0; ni < WN / 8; ni++) {
            const double *p = sB + (wn0 + ni * 8 + g) * QB + kk + t;
            b[ni][0] = p[0];
            b[ni][1] = p[4];
        }
#pragma unroll
        for (int mi = 0; mi < WM / 16; mi++)
#pragma unroll
            for (int ni = 0; ni < WN / 8; ni++)
                asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
                    "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                    : "+d"(acc[mi][ni][0]), "+d"(acc[mi][ni][1]), "+d"(acc[mi][ni][2]),
                      "+d"(acc[mi][ni][3])
                    : "d"(a[mi][0]), "d"(a[mi][1]), "d"(a[mi][2]), "d"(a[mi][3]),
                      "d"(b[ni][0]), "d"(b[ni][1]));
    }
#else
#pragma unroll
    for (int kk = 0; kk < BK; kk += 4) {
        double a[WM / 16][2], b[WN / 8];
#pragma unroll
        for (int mi = 0; mi < WM / 16; mi++) {
            const double *p = sA + (kk + t) * PA + wm0 + mi * 16 + g;
            a[mi][0] = p[0];
            a[mi][1] = p[8];
        }
#pragma unroll
        for (int ni = 0; ni < WN / 8; ni++)
            b[ni] = sB[(wn0 + ni * 8 + g) * QB + kk + t];
#pragma unroll
        for (int mi = 0; mi < WM / 16; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int ni = 0; ni < WN / 8; ni++)
                    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
                        "{%0,%1}, {%2}, {%3}, {%0,%1};\n"
                        : "+d"(acc[mi][ni][2 * h]), "+d"(acc[mi][ni][2 * h + 1])
                        : "d"(a[mi][h]), "d"(b[ni]));
    }
#endif
}

extern "C" __global__ void __launch_bounds__(NTHREADS, 1)
    dgemm_nn(int M, int N, int K, double alpha, const double *__restrict__ A, long long lda,
             const double *__restrict__ B, long long ldb, double beta, double *__restrict__ C,
             long long ldc)
{
    extern __shared__ __align__(16) double smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = (warp % WARPS_M) * WM, wn0 = (warp / WARPS_M) * WN;

    // Grouped block order: GROUP_M block-rows advance together along N.
    const int gridM = (M + BM - 1) / BM, gridN = (N + BN - 1) / BN;
    const int pid = blockIdx.x, perGroup = GROUP_M * gridN;
    const int firstM = (pid / perGroup) * GROUP_M;
    const int groupRows = min(gridM - firstM, GROUP_M);
    const int m0 = (firstM + (pid % perGroup) % groupRows) * BM;
    const int n0 = ((pid % perGroup) / groupRows) * BN;

    double acc[WM / 16][WN / 8][4];
#pragma unroll
    for (int mi = 0; mi < WM / 16; mi++)
#pragma unroll
        for (int ni = 0; ni < WN / 8; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mi][ni][e] = 0.0;

    const int ktiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < NSTAGE - 1; s++) {
        if (s < ktiles)
            loadTile(smem + s * STAGE_DOUBLES, smem + s * STAGE_DOUBLES + A_DOUBLES, A, B, M, N,
                     K, lda, ldb, m0, n0, s * BK, tid);
        cpAsyncCommit();
    }
    for (int kt = 0; kt < ktiles; kt++) {
        cpAsyncWait<NSTAGE - 2>();
        __syncthreads();
        const int next = kt + NSTAGE - 1;
        if (next < ktiles) {
            double *st = smem + (next % NSTAGE) * STAGE_DOUBLES;
            loadTile(st, st + A_DOUBLES, A, B, M, N, K, lda, ldb, m0, n0, next * BK, tid);
        }
        cpAsyncCommit();
        const double *st = smem + (kt % NSTAGE) * STAGE_DOUBLES;
        computeStage(acc, st, st + A_DOUBLES, wm0, wn0, g, t);
    }
    cpAsyncWait<0>();

#pragma unroll
    for (int mi = 0; mi < WM / 16; mi++)
#pragma unroll
        for (int ni = 0; ni < WN / 8; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int row = m0 + wm0 + mi * 16 + g + (e >> 1) * 8;
                const int col = n0 + wn0 + ni * 8 + 2 * t + (e & 1);
                if (row < M && col < N) {
                    double *p = C + (long long)col * ldc + row;
                    double v = alpha * acc[mi][ni][e];
                    if (beta != 0.0)
                        v = __fma_rn(beta, *p, v);
                    *p = v;
                }
            }
}

// splitmix64 is Steele, Lea and Flood's SplitMix64 finaliser; kernels.Uniform
// in Go is the same function.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// uniformAt is element k of the stream for seed: a double in [-1, 1) whose
// every step (53-bit integer to double, times 2^-52, minus 1) is exact.
__device__ __forceinline__ double uniformAt(unsigned long long seed, unsigned long long k)
{
    unsigned long long z = splitmix64(seed + (k + 1) * 0x9E3779B97F4A7C15ull);
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

// dgemm_fill sets the column-major rows x cols matrix m (leading dimension
// ld) to uniformAt(seed, i + j*rows) and the padding rows to zero.
extern "C" __global__ void dgemm_fill(double *__restrict__ m, int rows, int cols, long long ld,
                                      unsigned long long seed)
{
    const long long total = ld * cols;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        long long j = idx / ld, i = idx - j * ld;
        m[idx] = i < rows ? uniformAt(seed, (unsigned long long)(i + j * rows)) : 0.0;
    }
}

// dgemm_gather copies C[rows[i], cols[i]] to out[i] for i < count, where idx
// holds (row, col) pairs.
extern "C" __global__ void dgemm_gather(const double *__restrict__ C, long long ldc,
                                        const int *__restrict__ idx, int count,
                                        double *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        out[i] = C[(long long)idx[2 * i + 1] * ldc + idx[2 * i]];
}
