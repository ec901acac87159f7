// Skip-gram with negative sampling in FULL-W2V's design (Randall, Allen and
// Ge, ICS 2021): one sentence per warp (d <= 256) or per block (FULL-W2V's
// layout, d <= 1024); the window fixed at W_f; the N negatives of a window
// shared by all its context words; the output vectors (the centre word and
// its negatives) held in registers, an element per lane, while they are
// paired with every context word of the window; context vectors kept in a
// shared-memory ring of 2*W_f+1 rows for their whole life in the window,
// read once when they enter it, updated in place, written back as a delta
// (atomicAdd) when they leave. Subsampling, negatives and learning rates
// come from the host (kernels/w2v/sampler.go).
//
// Beyond FULL-W2V: a window's outputs are taken in groups of W2V_GROUP,
// whose rows are read together, and the group's (output, context) pairs run
// as a wavefront: at step s, output t meets context s-t. Pairs of a step
// touch different outputs and different contexts, and each pair sees
// exactly the values it would see in the sequential order (output by
// output, contexts in order), so the result is the same, while a warp has
// up to W2V_GROUP independent dot products (and their shuffles and table
// lookups) in flight instead of one.
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
// Outputs whose rows are read together and paired as a wavefront.
#define W2V_GROUP 6
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
__device__ int w2v_group = W2V_GROUP;
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

// w2v_window is the geometry of the window centred at w: its contexts are
// positions lo..hi but w, J of them; context j is position
// lo + j + (lo + j >= w), whose ring slot follows from the slot of
// position w - W_f without a division.
struct w2v_window {
    int lo, J, skip, first, base, R;
    __device__ __forceinline__ w2v_window(int w, int L, int wf, int R_) : R(R_)
    {
        lo = max(0, w - wf);
        const int hi = min(L - 1, w + wf);
        J = hi - lo;
        skip = w - lo;         // contexts from index skip on sit after the centre
        first = lo - (w - wf); // position lo's offset from w - W_f
        base = (w - wf) % R;   // slot of position w - W_f (as p % R for p >= 0)
        if (base < 0)
            base += R;
    }
    __device__ __forceinline__ int slot(int j) const
    {
        int s = base + first + j + (j >= skip);
        while (s >= R)
            s -= R;
        return s;
    }
};

// The warp kernels: warp w of block b trains sentences b*W2V_WARPS + w,
// then every gridDim.x*W2V_WARPS on (the grid bounds how many sentences
// train at once, their Hogwild concurrency); lane j holds
// elements j, j+32, ... (EPT of them at most) of the output vectors in
// registers and of each ring row in shared memory, so no lane ever touches
// another's elements: the shuffles are the warp's only communication.
template <int EPT>
__device__ __forceinline__ void w2v_sgns_warp(float *__restrict__ syn0, float *__restrict__ syn1,
                                              const int *__restrict__ tokens, const int *__restrict__ negs,
                                              const int *__restrict__ starts, const float *__restrict__ alphas,
                                              const float *__restrict__ tab, int s, int d, int wf, int n,
                                              float *ring)
{
    const int lane = threadIdx.x & 31;
    const int R = 2 * wf + 1;
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
        const w2v_window win(w, L, wf, R);
        for (int g0 = 0; g0 <= n; g0 += W2V_GROUP) {
            const int G = min(W2V_GROUP, n + 1 - g0);
            int id[W2V_GROUP];
            float o[W2V_GROUP][EPT], o0[W2V_GROUP][EPT];
#pragma unroll
            for (int t = 0; t < W2V_GROUP; t++) {
                id[t] = 0;
                if (t < G) {
                    const int k = g0 + t;
                    id[t] = k == 0 ? __ldg(tok + w) : __ldg(neg + (long long)w * n + k - 1);
                    const float *row = syn1 + (size_t)id[t] * d;
#pragma unroll
                    for (int k2 = 0; k2 < EPT; k2++) {
                        const int e = lane + 32 * k2;
                        o[t][k2] = e < d ? W2V_LDCG(row + e) : 0.0f;
                        o0[t][k2] = o[t][k2];
                    }
                }
            }
            // The wavefront: at step st, output t meets context st - t.
            for (int st = 0; st < G + win.J - 1; st++) {
                float part[W2V_GROUP];
#pragma unroll
                for (int t = 0; t < W2V_GROUP; t++) {
                    part[t] = 0.0f;
                    const int j = st - t;
                    if (t < G && j >= 0 && j < win.J) {
                        const float *c = ring + win.slot(j) * d;
#pragma unroll
                        for (int k = 0; k < EPT; k++) {
                            const int e = lane + 32 * k;
                            if (e < d)
                                part[t] = __fadd_rn(part[t], __fmul_rn(c[e], o[t][k]));
                        }
                    }
                }
#pragma unroll
                for (int m = 16; m >= 1; m >>= 1) {
#pragma unroll
                    for (int t = 0; t < W2V_GROUP; t++) {
                        const int j = st - t;
                        if (t < G && j >= 0 && j < win.J)
                            part[t] = __fadd_rn(part[t], __shfl_xor_sync(0xffffffffu, part[t], m));
                    }
                }
#pragma unroll
                for (int t = 0; t < W2V_GROUP; t++) {
                    const int j = st - t;
                    if (t < G && j >= 0 && j < win.J) {
                        const float g = w2v_gradient(part[t], g0 + t == 0 ? 1.0f : 0.0f, alpha, tab);
                        float *c = ring + win.slot(j) * d;
#pragma unroll
                        for (int k = 0; k < EPT; k++) {
                            const int e = lane + 32 * k;
                            if (e < d) {
                                const float ce = c[e];
                                c[e] = __fadd_rn(ce, __fmul_rn(g, o[t][k]));
                                o[t][k] = __fadd_rn(o[t][k], __fmul_rn(g, ce));
                            }
                        }
                    }
                }
            }
#pragma unroll
            for (int t = 0; t < W2V_GROUP; t++) {
                if (t < G) {
                    float *row = syn1 + (size_t)id[t] * d;
#pragma unroll
                    for (int k = 0; k < EPT; k++) {
                        const int e = lane + 32 * k;
                        if (e < d)
                            atomicAdd(row + e, __fsub_rn(o[t][k], o0[t][k]));
                    }
                }
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
        W2V_SHARED_ARRAY(float, w2v_warp_shared);                                                             \
        const int warp = threadIdx.x >> 5;                                                                    \
        float *ring = w2v_warp_shared + (size_t)warp * 2 * (2 * wf + 1) * d;                                  \
        for (int s = blockIdx.x * W2V_WARPS + warp; s < nsent; s += gridDim.x * W2V_WARPS)                    \
            w2v_sgns_warp<EPT>(syn0, syn1, tokens, negs, starts, alphas, tab, s, d, wf, n, ring);             \
    }
W2V_WARP_KERNEL(1)
W2V_WARP_KERNEL(2)
W2V_WARP_KERNEL(4)
W2V_WARP_KERNEL(8)

// w2v_sgns_block is FULL-W2V's layout: block b trains sentences b, then
// every gridDim.x on, with 32*ceil(d/32) threads, thread t holding element
// t; the warps' sums of a wavefront step meet in shared memory (two sets
// of slots alternating, so one barrier per step).
__device__ __forceinline__ void w2v_sgns_block_sentence(float *__restrict__ syn0, float *__restrict__ syn1,
                                                        const int *__restrict__ tokens, const int *__restrict__ negs,
                                                        const int *__restrict__ starts,
                                                        const float *__restrict__ alphas,
                                                        const float *__restrict__ tab, int s, int d, int wf, int n,
                                                        float *w2v_block_shared)
{
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, nw = blockDim.x >> 5;
    const int R = 2 * wf + 1;
    float *ring = w2v_block_shared, *orig = w2v_block_shared + (size_t)R * d;
    float *red = w2v_block_shared + (size_t)2 * R * d; // [2][W2V_GROUP][32]
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
        const w2v_window win(w, L, wf, R);
        for (int g0 = 0; g0 <= n; g0 += W2V_GROUP) {
            const int G = min(W2V_GROUP, n + 1 - g0);
            int id[W2V_GROUP];
            float o[W2V_GROUP], o0[W2V_GROUP];
#pragma unroll
            for (int u = 0; u < W2V_GROUP; u++) {
                id[u] = 0;
                o[u] = 0.0f;
                if (u < G) {
                    const int k = g0 + u;
                    id[u] = k == 0 ? __ldg(tok + w) : __ldg(neg + (long long)w * n + k - 1);
                    if (has)
                        o[u] = W2V_LDCG(syn1 + (size_t)id[u] * d + t);
                }
                o0[u] = o[u];
            }
            for (int st = 0; st < G + win.J - 1; st++) {
                float *rs = red + par * W2V_GROUP * 32;
#pragma unroll
                for (int u = 0; u < W2V_GROUP; u++) {
                    const int j = st - u;
                    if (u < G && j >= 0 && j < win.J) {
                        float part = 0.0f;
                        if (has)
                            part = __fadd_rn(part, __fmul_rn(ring[win.slot(j) * d + t], o[u]));
#pragma unroll
                        for (int m = 16; m >= 1; m >>= 1)
                            part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, m));
                        if (lane == 0)
                            rs[u * 32 + warp] = part;
                    }
                }
                __syncthreads();
                par ^= 1;
#pragma unroll
                for (int u = 0; u < W2V_GROUP; u++) {
                    const int j = st - u;
                    if (u < G && j >= 0 && j < win.J) {
                        float f = rs[u * 32];
                        for (int i = 1; i < nw; i++)
                            f = __fadd_rn(f, rs[u * 32 + i]);
                        const float g = w2v_gradient(f, g0 + u == 0 ? 1.0f : 0.0f, alpha, tab);
                        if (has) {
                            float *c = ring + win.slot(j) * d + t;
                            const float ce = *c;
                            *c = __fadd_rn(ce, __fmul_rn(g, o[u]));
                            o[u] = __fadd_rn(o[u], __fmul_rn(g, ce));
                        }
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < W2V_GROUP; u++) {
                if (u < G && has)
                    atomicAdd(syn1 + (size_t)id[u] * d + t, __fsub_rn(o[u], o0[u]));
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

extern "C" __global__ void __launch_bounds__(1024)
    w2v_sgns_block(float *__restrict__ syn0, float *__restrict__ syn1, const int *__restrict__ tokens,
                   const int *__restrict__ negs, const int *__restrict__ starts, const float *__restrict__ alphas,
                   const float *__restrict__ tab, int nsent, int d, int wf, int n)
{
    W2V_SHARED_ARRAY(float, w2v_block_shared);
    for (int s = blockIdx.x; s < nsent; s += gridDim.x) {
        w2v_sgns_block_sentence(syn0, syn1, tokens, negs, starts, alphas, tab, s, d, wf, n, w2v_block_shared);
        // The next sentence reuses the ring and the reduction slots.
        __syncthreads();
    }
}
