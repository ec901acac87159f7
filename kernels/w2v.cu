// Skip-gram with negative sampling in FULL-W2V's design (Randall, Allen and
// Ge, ICS 2021): one sentence per warp (d <= 256) or per block (FULL-W2V's
// layout, d <= 1024); the window fixed at W_f; the N negatives of a window
// shared by all its context words; each output vector (the centre word,
// then its negatives) held in registers, an element per lane, while it is
// paired with every context word of the window; context vectors kept in a
// shared-memory ring of 2*W_f+1 rows for their whole life in the window,
// read once when they enter it, updated in place, written back as a delta
// (atomicAdd) when they leave. Subsampling, negatives and learning rates
// come from the host (kernels/w2v/sampler.go).
//
// The Go package kernels/w2v is the reference: its package comment defines
// the computation and the one order of its floating-point operations,
// which these kernels follow with _rn intrinsics (no contraction into
// fused multiply-adds), so that a sentence trained alone matches Go's bit
// for bit. Sentences trained at once race on shared rows as word2vec's
// threads do (Hogwild).
//
// Regenerate the committed PTX and fatbin with kernels/scripts/gen.sh.

// Sentences (warps) per block of the warp kernels.
#define W2V_WARPS 4
// word2vec's logistic table: 1000 values over [-6, 6).
#define W2V_EXP_TABLE 1000
#define W2V_MAX_EXP 6.0f
#define W2V_EXP_SCALE ((float)(W2V_EXP_TABLE / (2.0 * 6.0)))

// W2V_SHARED_ARRAY declares the block's dynamic shared memory; the CPU
// emulation of this file (kernels/w2v/internal/w2vemu) defines it its own way.
#ifndef W2V_SHARED_ARRAY
#define W2V_SHARED_ARRAY(type, name) extern __shared__ type name[]
#endif

// W2V_LDCG reads an element of the model from L2 (ld.global.cg), where the
// atomics land, so a block sees its own updates and, soon, others'. The
// asm is volatile with a memory clobber: the compiler may not move it
// across the atomicAdds that write the same rows (CUDA's __ldcg has no
// clobber and could be hoisted above them). The CPU emulation of this file
// defines its own.
#ifndef W2V_LDCG
__device__ __forceinline__ float w2v_ldcg(const float *p)
{
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
    return v;
}
#define W2V_LDCG(p) w2v_ldcg(p)
#endif

// Constants the host reads rather than repeating.
extern "C" {
__device__ int w2v_warps = W2V_WARPS;
__device__ int w2v_exp_table = W2V_EXP_TABLE;
}

// w2v_gradient is g = (label - sigma(f)) * alpha, sigma from the table.
__device__ __forceinline__ float w2v_gradient(float f, float label, float alpha, const float *__restrict__ tab)
{
    float s;
    if (f >= W2V_MAX_EXP) {
        s = 1.0f;
    } else if (f <= -W2V_MAX_EXP) {
        s = 0.0f;
    } else {
        int i = (int)__fmul_rn(__fadd_rn(f, W2V_MAX_EXP), W2V_EXP_SCALE);
        i = min(max(i, 0), W2V_EXP_TABLE - 1);
        s = __ldg(tab + i);
    }
    return __fmul_rn(__fsub_rn(label, s), alpha);
}

// w2v_butterfly sums a value over the warp: every lane gets the total.
__device__ __forceinline__ float w2v_butterfly(float p)
{
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1)
        p = __fadd_rn(p, __shfl_xor_sync(0xffffffffu, p, s));
    return p;
}

// The warp kernels: sentence blockIdx.x*W2V_WARPS + warp; lane j holds
// elements j, j+32, ... (EPT of them at most) of the output vector in
// registers and of each ring row in shared memory, so no lane ever touches
// another's elements: the shuffles are the warp's only communication.
template <int EPT>
__device__ __forceinline__ void w2v_sgns_warp(float *__restrict__ syn0, float *__restrict__ syn1,
                                              const int *__restrict__ tokens, const int *__restrict__ negs,
                                              const int *__restrict__ starts, const float *__restrict__ alphas,
                                              const float *__restrict__ tab, int nsent, int d, int wf, int n)
{
    W2V_SHARED_ARRAY(float, w2v_shared);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int s = blockIdx.x * W2V_WARPS + warp;
    if (s >= nsent)
        return;
    const int R = 2 * wf + 1;
    float *ring = w2v_shared + (size_t)warp * 2 * R * d;
    float *orig = ring + (size_t)R * d;
    const int start = __ldg(starts + s), L = __ldg(starts + s + 1) - start;
    if (L < 2)
        return;
    const int *tok = tokens + start;
    const int *neg = negs + (long long)start * n;
    const float alpha = __ldg(alphas + s);

    // Context rows: read on entering the window, written back on leaving.
    auto load = [&](int p) {
        const float *src = syn0 + (size_t)__ldg(tok + p) * d;
        float *c = ring + (p % R) * d, *c0 = orig + (p % R) * d;
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            const int e = lane + 32 * k;
            if (e < d) {
                const float v = W2V_LDCG(src + e);
                c[e] = v;
                c0[e] = v;
            }
        }
    };
    auto store = [&](int p) {
        float *dst = syn0 + (size_t)__ldg(tok + p) * d;
        const float *c = ring + (p % R) * d, *c0 = orig + (p % R) * d;
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            const int e = lane + 32 * k;
            if (e < d)
                atomicAdd(dst + e, __fsub_rn(c[e], c0[e]));
        }
    };

    for (int p = 0; p <= min(wf, L - 1); p++)
        load(p);
    for (int w = 0; w < L; w++) {
        const int lo = max(0, w - wf), hi = min(L - 1, w + wf);
        for (int t = 0; t <= n; t++) {
            int id;
            float label;
            if (t == 0) {
                id = __ldg(tok + w);
                label = 1.0f;
            } else {
                id = __ldg(neg + (long long)w * n + t - 1);
                label = 0.0f;
            }
            float *row = syn1 + (size_t)id * d;
            float o[EPT], o0[EPT];
#pragma unroll
            for (int k = 0; k < EPT; k++) {
                const int e = lane + 32 * k;
                o[k] = e < d ? W2V_LDCG(row + e) : 0.0f;
                o0[k] = o[k];
            }
            // The ring slot of position p is p % R, followed without dividing.
            for (int p = lo, slot = lo % R; p <= hi; p++, slot = slot + 1 == R ? 0 : slot + 1) {
                if (p == w)
                    continue;
                float *c = ring + slot * d;
                float part = 0.0f;
#pragma unroll
                for (int k = 0; k < EPT; k++) {
                    const int e = lane + 32 * k;
                    if (e < d)
                        part = __fadd_rn(part, __fmul_rn(c[e], o[k]));
                }
                const float g = w2v_gradient(w2v_butterfly(part), label, alpha, tab);
#pragma unroll
                for (int k = 0; k < EPT; k++) {
                    const int e = lane + 32 * k;
                    if (e < d) {
                        const float ce = c[e];
                        c[e] = __fadd_rn(ce, __fmul_rn(g, o[k]));
                        o[k] = __fadd_rn(o[k], __fmul_rn(g, ce));
                    }
                }
            }
#pragma unroll
            for (int k = 0; k < EPT; k++) {
                const int e = lane + 32 * k;
                if (e < d)
                    atomicAdd(row + e, __fsub_rn(o[k], o0[k]));
            }
        }
        if (w - wf >= 0)
            store(w - wf);
        if (w + wf + 1 < L)
            load(w + wf + 1);
    }
    for (int p = max(0, L - wf); p < L; p++)
        store(p);
}

#define W2V_WARP_KERNEL(EPT)                                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * W2V_WARPS) w2v_sgns_warp##EPT(                            \
        float *syn0, float *syn1, const int *tokens, const int *negs, const int *starts, const float *alphas, \
        const float *tab, int nsent, int d, int wf, int n)                                                    \
    {                                                                                                         \
        w2v_sgns_warp<EPT>(syn0, syn1, tokens, negs, starts, alphas, tab, nsent, d, wf, n);                   \
    }
W2V_WARP_KERNEL(1)
W2V_WARP_KERNEL(2)
W2V_WARP_KERNEL(4)
W2V_WARP_KERNEL(8)

// w2v_sgns_block is FULL-W2V's layout: sentence blockIdx.x, 32*ceil(d/32)
// threads, thread t holding element t; the warps' sums meet in shared
// memory (two slots alternating, so one barrier per dot product).
extern "C" __global__ void __launch_bounds__(1024)
    w2v_sgns_block(float *__restrict__ syn0, float *__restrict__ syn1, const int *__restrict__ tokens,
                   const int *__restrict__ negs, const int *__restrict__ starts, const float *__restrict__ alphas,
                   const float *__restrict__ tab, int nsent, int d, int wf, int n)
{
    W2V_SHARED_ARRAY(float, w2v_shared);
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, nw = blockDim.x >> 5;
    const int s = blockIdx.x;
    if (s >= nsent)
        return;
    const int R = 2 * wf + 1;
    float *ring = w2v_shared, *orig = w2v_shared + (size_t)R * d;
    float *red = w2v_shared + (size_t)2 * R * d; // [2][32]
    const int start = __ldg(starts + s), L = __ldg(starts + s + 1) - start;
    if (L < 2)
        return;
    const int *tok = tokens + start;
    const int *neg = negs + (long long)start * n;
    const float alpha = __ldg(alphas + s);
    const bool has = t < d;
    int par = 0;

    auto load = [&](int p) {
        if (has) {
            const float v = W2V_LDCG(syn0 + (size_t)__ldg(tok + p) * d + t);
            ring[(p % R) * d + t] = v;
            orig[(p % R) * d + t] = v;
        }
    };
    auto store = [&](int p) {
        if (has)
            atomicAdd(syn0 + (size_t)__ldg(tok + p) * d + t, __fsub_rn(ring[(p % R) * d + t], orig[(p % R) * d + t]));
    };

    for (int p = 0; p <= min(wf, L - 1); p++)
        load(p);
    for (int w = 0; w < L; w++) {
        const int lo = max(0, w - wf), hi = min(L - 1, w + wf);
        for (int k = 0; k <= n; k++) {
            int id;
            float label;
            if (k == 0) {
                id = __ldg(tok + w);
                label = 1.0f;
            } else {
                id = __ldg(neg + (long long)w * n + k - 1);
                label = 0.0f;
            }
            float *row = syn1 + (size_t)id * d;
            float o = has ? W2V_LDCG(row + t) : 0.0f;
            const float o0 = o;
            for (int p = lo, slot = lo % R; p <= hi; p++, slot = slot + 1 == R ? 0 : slot + 1) {
                if (p == w)
                    continue;
                float *c = ring + slot * d;
                float part = 0.0f;
                if (has)
                    part = __fadd_rn(part, __fmul_rn(c[t], o));
                part = w2v_butterfly(part);
                if (lane == 0)
                    red[par * 32 + warp] = part;
                __syncthreads();
                float f = red[par * 32];
                for (int i = 1; i < nw; i++)
                    f = __fadd_rn(f, red[par * 32 + i]);
                par ^= 1;
                const float g = w2v_gradient(f, label, alpha, tab);
                if (has) {
                    const float ce = c[t];
                    c[t] = __fadd_rn(ce, __fmul_rn(g, o));
                    o = __fadd_rn(o, __fmul_rn(g, ce));
                }
            }
            if (has)
                atomicAdd(row + t, __fsub_rn(o, o0));
        }
        if (w - wf >= 0)
            store(w - wf);
        if (w + wf + 1 < L)
            load(w + wf + 1);
    }
    for (int p = max(0, L - wf); p < L; p++)
        store(p);
}
