// Skip-gram with negative sampling in FULL-W2V's design (Randall, Allen and
// Ge, ICS 2021): one sentence per warp (d <= 256) or per block (FULL-W2V's
// layout, d <= 1024); the window fixed at W_f; the N negatives of a window
// shared by all its context words; an output vector (the centre word or a
// negative) held in registers, an element per lane, while it is paired
// with every context word of the window; context vectors kept in a
// shared-memory ring of 2*W_f+1 rows for their whole life in the window,
// read once when they enter it, updated in place, written back as a delta
// (atomicAdd) when they leave; or, fresh, read at the start of each window
// and written back at its end, as word2vec keeps them (with thousands of
// sentences at once, a row kept for 2*W_f+1 windows misses many others'
// updates to it, and they its own).
//
// Beyond FULL-W2V: the host only uploads the corpus once. Subsampling and
// negatives are drawn here (w2v_draw) from Philox4x32-10 keyed by the seed
// and counted by (corpus position, epoch), the numbers the Go sampler
// draws; and a warp reads the row it needs next (the next output, the
// context entering the window after this one) while it trains the current
// one, so its loads wait on nothing. The prefetch is the sequential
// order's read, moved earlier: when the row it read is written by this
// warp before the read's place in that order (a repeated output, a context
// leaving and re-entering), the warp reads it again there.
//
// The Go package kernels/w2v is the reference: its package comment defines
// the computation and the one order of its floating-point operations,
// which these kernels follow with _rn intrinsics (no contraction into
// fused multiply-adds), so that a sentence trained alone matches Go's bit
// for bit. Sentences trained at once race on shared rows as word2vec's
// threads do (Hogwild).
//
// Regenerate the committed PTX and fatbin with kernels/scripts/gen.sh.

// Sentences (warps) per block of the warp kernels and of w2v_draw.
#define W2V_WARPS 4
// word2vec's logistic table: 1000 values over [-6, 6).
#define W2V_EXP_TABLE 1000
#define W2V_MAX_EXP 6.0f
#define W2V_EXP_SCALE ((float)(W2V_EXP_TABLE / (2.0 * 6.0)))
// Philox words a negative may take before the fallback (as sampler.go).
#define W2V_NEG_TRIES 16

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
__device__ int w2v_neg_tries = W2V_NEG_TRIES;
}

// ---- Draws: Philox4x32-10 (Random123), as kernels/w2v/philox.go ----

__device__ __forceinline__ void w2v_philox(unsigned c[4], unsigned k0, unsigned k1)
{
#pragma unroll
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const unsigned hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
        const unsigned hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
        const unsigned n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
}

// w2v_stream is a token's draws in an epoch (sampler.go's stream): the
// words of Philox at counters (pos, epoch, k, pos >> 32), k = 0, 1, ...,
// four per counter, in order. The words queue in r0..r3 (a register array
// indexed at run time would live in local memory).
struct w2v_stream {
    unsigned c0, c1, c2, c3, k0, k1, r0, r1, r2, r3;
    int left;
    __device__ __forceinline__ w2v_stream(unsigned long long pos, unsigned epoch, unsigned key0, unsigned key1)
        : c0((unsigned)pos), c1(epoch), c2(0), c3((unsigned)(pos >> 32)), k0(key0), k1(key1)
    {
        fill();
    }
    __device__ __forceinline__ void fill()
    {
        unsigned c[4] = {c0, c1, c2, c3};
        w2v_philox(c, k0, k1);
        r0 = c[0];
        r1 = c[1];
        r2 = c[2];
        r3 = c[3];
        left = 4;
    }
    __device__ __forceinline__ unsigned next()
    {
        if (left == 0) {
            c2++;
            fill();
        }
        const unsigned x = r0;
        r0 = r1;
        r1 = r2;
        r2 = r3;
        left--;
        return x;
    }
};

// w2v_negative is sampler.go's negative: a unigram-table draw, </s> made a
// uniform other word, the centre word w redrawn; after W2V_NEG_TRIES, a
// uniform word other than w.
__device__ __forceinline__ int w2v_negative(w2v_stream &r, int w, const int *__restrict__ table, unsigned size,
                                            int vocab, int eos)
{
    for (int t = 0; t < W2V_NEG_TRIES; t++) {
        int x = __ldg(table + __umulhi(r.next(), size));
        if (eos && x == 0 && vocab > 1)
            x = (int)__umulhi(r.next(), (unsigned)(vocab - 1)) + 1;
        if (x != w)
            return x;
    }
    if (vocab < 2)
        return w;
    return (int)(((unsigned)w + 1u + __umulhi(r.next(), (unsigned)(vocab - 1))) % (unsigned)vocab);
}

// w2v_draw draws sentences first .. first+nsent-1 of an epoch, a warp per
// sentence, lane j taking raw tokens j, j+32, ...: a token is kept when its
// stream's first word is below the threshold of its word (thr, 2^32 for
// always); the kept tokens, in order, and their n negatives each go to tok
// and neg at the sentence's raw offset less base (kept <= raw, so
// sentences never overlap); lens gets each sentence's kept length and
// *kept their sum.
extern "C" __global__ void __launch_bounds__(32 * W2V_WARPS)
    w2v_draw(const int *__restrict__ corpus, const int *__restrict__ starts, const unsigned long long *__restrict__ thr,
             const int *__restrict__ table, int *__restrict__ tok, int *__restrict__ neg, int *__restrict__ lens,
             unsigned long long *kept, unsigned tableSize, int vocab, int eos, int n, unsigned seed0, unsigned seed1,
             unsigned epoch, int first, int nsent, int base)
{
    const int lane = threadIdx.x & 31;
    const int warps = gridDim.x * (blockDim.x >> 5);
    unsigned long long sum = 0;
    for (int i = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); i < nsent; i += warps) {
        const int s = first + i;
        const int rs = __ldg(starts + s), re = __ldg(starts + s + 1);
        int k = 0;
        for (int at = rs; at < re; at += 32) {
            const int p = at + lane;
            int w = 0;
            bool keep = false;
            w2v_stream r((unsigned long long)(unsigned)p, epoch, seed0, seed1);
            if (p < re) {
                w = __ldg(corpus + p);
                keep = (unsigned long long)r.next() < __ldg(thr + w);
            }
            const unsigned ballot = __ballot_sync(0xffffffffu, keep);
            if (keep) {
                const int q = rs - base + k + __popc(ballot & ((1u << lane) - 1u));
                tok[q] = w;
                for (int j = 0; j < n; j++)
                    neg[(long long)q * n + j] = w2v_negative(r, w, table, tableSize, vocab, eos);
            }
            k += __popc(ballot);
        }
        if (lane == 0) {
            lens[i] = k;
            sum += k;
        }
    }
    if (lane == 0 && sum > 0)
        atomicAdd(kept, sum);
}

// ---- Training ----

// w2v_gradient is g = (label - sigma(f)) * alpha, sigma from the table.
__device__ __forceinline__ float w2v_gradient(float f, float label, float alpha, const float *tab)
{
    float s;
    if (f >= W2V_MAX_EXP) {
        s = 1.0f;
    } else if (f <= -W2V_MAX_EXP) {
        s = 0.0f;
    } else {
        int i = (int)__fmul_rn(__fadd_rn(f, W2V_MAX_EXP), W2V_EXP_SCALE);
        i = min(max(i, 0), W2V_EXP_TABLE - 1);
        s = tab[i];
    }
    return __fmul_rn(__fsub_rn(label, s), alpha);
}

// w2v_table_to_shared copies the logistic table into the block's shared
// memory (a broadcast read there is quicker than from L1).
__device__ __forceinline__ void w2v_table_to_shared(float *dst, const float *__restrict__ src)
{
    for (int i = threadIdx.x; i < W2V_EXP_TABLE; i += blockDim.x)
        dst[i] = __ldg(src + i);
    __syncthreads();
}

// The warp kernels' sentence: lane j holds elements j, j+32, ... (EPT of
// them at most) of the output vector in registers and of each ring row in
// shared memory, so no lane ever touches another's elements: the shuffles
// are the warp's only communication.
template <int EPT>
__device__ __forceinline__ void w2v_sgns_warp(float *__restrict__ syn0, float *__restrict__ syn1,
                                              const int *__restrict__ tok, const int *__restrict__ neg, int L,
                                              float alpha, const float *tab, int d, int wf, int n, int fresh,
                                              float *ring)
{
    const int lane = threadIdx.x & 31;
    const int R = 2 * wf + 1;
    float *orig = ring + (size_t)R * d;
    if (L < 2)
        return;

    auto read = [&](const float *row, float(&v)[EPT]) {
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            const int e = lane + 32 * k;
            v[k] = e < d ? W2V_LDCG(row + e) : 0.0f;
        }
    };
    auto put = [&](int slot, const float(&v)[EPT]) {
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            const int e = lane + 32 * k;
            if (e < d) {
                ring[slot * d + e] = v[k];
                orig[slot * d + e] = v[k];
            }
        }
    };
    auto get = [&](int slot, float(&v)[EPT]) {
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            const int e = lane + 32 * k;
            v[k] = e < d ? ring[slot * d + e] : 0.0f;
        }
    };
    // Position p leaves the window: its delta goes back to syn0.
    auto evict = [&](int p) {
        float *dst = syn0 + (size_t)__ldg(tok + p) * d;
        const int slot = p % R;
#pragma unroll
        for (int k = 0; k < EPT; k++) {
            const int e = lane + 32 * k;
            if (e < d)
                atomicAdd(dst + e, __fsub_rn(ring[slot * d + e], orig[slot * d + e]));
        }
    };

    // Fresh: window w's contexts are read at its start and written back at
    // its end (window 0's: positions 1..W_f). The ring: positions 0..W_f.
    for (int p = fresh ? 1 : 0; p <= min(wf, L - 1); p++) {
        float v[EPT];
        read(syn0 + (size_t)__ldg(tok + p) * d, v);
        put(p, v);
    }
    // The next output's row, read ahead: the first is centre 0's.
    int nid = __ldg(tok);
    float on[EPT];
    read(syn1 + (size_t)nid * d, on);
    for (int w = 0; w < L; w++) {
        const int lo = max(0, w - wf), hi = min(L - 1, w + wf);
        // The ring's context entering after this window, read now; and the
        // one leaving, whose write-back that read must follow if they are
        // one row.
        const int in = w + wf + 1, out = w - wf;
        int inId = 0;
        float cn[EPT];
        if (!fresh && in < L) {
            inId = __ldg(tok + in);
            read(syn0 + (size_t)inId * d, cn);
        }
        for (int t = 0; t <= n; t++) {
            const int id = nid;
            float o[EPT], o0[EPT];
#pragma unroll
            for (int k = 0; k < EPT; k++)
                o[k] = o0[k] = on[k];
            // Read ahead: the next negative, or the next window's centre.
            nid = -1;
            if (t < n)
                nid = __ldg(neg + (long long)w * n + t);
            else if (w + 1 < L)
                nid = __ldg(tok + w + 1);
            if (nid >= 0)
                read(syn1 + (size_t)nid * d, on);
            const float label = t == 0 ? 1.0f : 0.0f;
            // Contexts lo..hi but w, in order; the next one's row is read
            // from the ring before this one's is written (distinct slots).
            int p = lo == w ? lo + 1 : lo;
            int slot = p % R;
            float c[EPT];
            get(slot, c);
            while (p <= hi) {
                int np = p + 1 == w ? p + 2 : p + 1;
                int nslot = slot + (np - p);
                if (nslot >= R)
                    nslot -= R;
                // (Past the last context this reads a slot it will not use.)
                float cnext[EPT];
                get(nslot, cnext);
                float part = 0.0f;
#pragma unroll
                for (int k = 0; k < EPT; k++) {
                    if (lane + 32 * k < d)
                        part = __fadd_rn(part, __fmul_rn(c[k], o[k]));
                }
#pragma unroll
                for (int m = 16; m >= 1; m >>= 1)
                    part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, m));
                const float g = w2v_gradient(part, label, alpha, tab);
#pragma unroll
                for (int k = 0; k < EPT; k++) {
                    const int e = lane + 32 * k;
                    if (e < d) {
                        ring[slot * d + e] = __fadd_rn(c[k], __fmul_rn(g, o[k]));
                        o[k] = __fadd_rn(o[k], __fmul_rn(g, c[k]));
                    }
                }
                p = np;
                slot = nslot;
#pragma unroll
                for (int k = 0; k < EPT; k++)
                    c[k] = cnext[k];
            }
            float *row = syn1 + (size_t)id * d;
#pragma unroll
            for (int k = 0; k < EPT; k++) {
                const int e = lane + 32 * k;
                if (e < d)
                    atomicAdd(row + e, __fsub_rn(o[k], o0[k]));
            }
            if (nid == id)
                read(syn1 + (size_t)nid * d, on);
        }
        if (fresh) {
            // This window's contexts go back; the next window's are read.
            for (int p = lo; p <= hi; p++)
                if (p != w)
                    evict(p);
            for (int p = max(0, w + 1 - wf); w + 1 < L && p <= min(L - 1, w + 1 + wf); p++) {
                if (p != w + 1) {
                    float v[EPT];
                    read(syn0 + (size_t)__ldg(tok + p) * d, v);
                    put(p % R, v);
                }
            }
            continue;
        }
        if (out >= 0)
            evict(out);
        if (in < L) {
            if (out >= 0 && __ldg(tok + out) == inId)
                read(syn0 + (size_t)inId * d, cn);
            put(in % R, cn);
        }
    }
    for (int p = max(0, L - wf); !fresh && p < L; p++)
        evict(p);
}

// The warp kernels: warp w of the grid trains sentences first + w, then
// every (warps in the grid) on, so the grid bounds how many sentences
// train at once (their Hogwild concurrency). Sentence s's kept tokens and
// negatives start at tok[starts[s] - base] and neg[(starts[s] - base)*n];
// its kept length and rate are lens[s - first] and alphas[s - first].
// Shared memory: the logistic table, then each warp's ring and its values
// at read time.
#define W2V_WARP_KERNEL(EPT)                                                                                       \
    extern "C" __global__ void __launch_bounds__(32 * W2V_WARPS) w2v_sgns_warp##EPT(                               \
        float *syn0, float *syn1, const int *tok, const int *neg, const int *starts, const int *lens,              \
        const float *alphas, const float *tab, int first, int nsent, int base, int d, int wf, int n, int fresh)  \
    {                                                                                                            \
        W2V_SHARED_ARRAY(float, w2v_warp_shared);                                                                \
        w2v_table_to_shared(w2v_warp_shared, tab);                                                               \
        const int warp = threadIdx.x >> 5, per = blockDim.x >> 5;                                                \
        float *ring = w2v_warp_shared + W2V_EXP_TABLE + (size_t)warp * 2 * (2 * wf + 1) * d;                     \
        for (int i = blockIdx.x * per + warp; i < nsent; i += gridDim.x * per) {                                 \
            const int at = __ldg(starts + first + i) - base;                                                     \
            w2v_sgns_warp<EPT>(syn0, syn1, tok + at, neg + (long long)at * n, __ldg(lens + i), __ldg(alphas + i), \
                               w2v_warp_shared, d, wf, n, fresh, ring);                                          \
        }                                                                                                        \
    }
W2V_WARP_KERNEL(1)
W2V_WARP_KERNEL(2)
W2V_WARP_KERNEL(4)
W2V_WARP_KERNEL(8)

// w2v_sgns_block is FULL-W2V's layout: block b trains sentences first + b,
// then every gridDim.x on, with 32*ceil(d/32) threads, thread t holding
// element t; the warps' sums of a pair meet in shared memory (two sets of
// slots alternating, so one barrier per pair).
__device__ __forceinline__ void w2v_sgns_block_sentence(float *__restrict__ syn0, float *__restrict__ syn1,
                                                        const int *__restrict__ tok, const int *__restrict__ neg,
                                                        int L, float alpha, const float *tab, int d, int wf, int n,
                                                        int fresh, float *ring, float *red)
{
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5, nw = blockDim.x >> 5;
    const int R = 2 * wf + 1;
    float *orig = ring + (size_t)R * d;
    if (L < 2)
        return;
    const bool has = t < d;
    int par = 0;

    auto read = [&](const float *row) { return has ? W2V_LDCG(row + t) : 0.0f; };
    auto put = [&](int slot, float v) {
        if (has) {
            ring[slot * d + t] = v;
            orig[slot * d + t] = v;
        }
    };
    auto evict = [&](int p) {
        const int slot = p % R;
        if (has)
            atomicAdd(syn0 + (size_t)__ldg(tok + p) * d + t, __fsub_rn(ring[slot * d + t], orig[slot * d + t]));
    };

    for (int p = fresh ? 1 : 0; p <= min(wf, L - 1); p++)
        put(p, read(syn0 + (size_t)__ldg(tok + p) * d));
    int nid = __ldg(tok);
    float on = read(syn1 + (size_t)nid * d);
    for (int w = 0; w < L; w++) {
        const int lo = max(0, w - wf), hi = min(L - 1, w + wf);
        const int in = w + wf + 1, out = w - wf;
        int inId = 0;
        float cn = 0.0f;
        if (!fresh && in < L) {
            inId = __ldg(tok + in);
            cn = read(syn0 + (size_t)inId * d);
        }
        for (int u = 0; u <= n; u++) {
            const int id = nid;
            float o = on;
            const float o0 = on;
            nid = -1;
            if (u < n)
                nid = __ldg(neg + (long long)w * n + u);
            else if (w + 1 < L)
                nid = __ldg(tok + w + 1);
            if (nid >= 0)
                on = read(syn1 + (size_t)nid * d);
            const float label = u == 0 ? 1.0f : 0.0f;
            int slot = lo % R;
            for (int p = lo; p <= hi; p++, slot = slot + 1 == R ? 0 : slot + 1) {
                if (p == w)
                    continue;
                float *c = ring + slot * d + t;
                const float ce = has ? *c : 0.0f;
                float part = has ? __fadd_rn(0.0f, __fmul_rn(ce, o)) : 0.0f;
#pragma unroll
                for (int m = 16; m >= 1; m >>= 1)
                    part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, m));
                float *rs = red + par * 32;
                if (lane == 0)
                    rs[warp] = part;
                __syncthreads();
                par ^= 1;
                float f = rs[0];
                for (int i = 1; i < nw; i++)
                    f = __fadd_rn(f, rs[i]);
                const float g = w2v_gradient(f, label, alpha, tab);
                if (has) {
                    *c = __fadd_rn(ce, __fmul_rn(g, o));
                    o = __fadd_rn(o, __fmul_rn(g, ce));
                }
            }
            if (has)
                atomicAdd(syn1 + (size_t)id * d + t, __fsub_rn(o, o0));
            if (nid == id)
                on = read(syn1 + (size_t)nid * d);
        }
        if (fresh) {
            for (int p = lo; p <= hi; p++)
                if (p != w)
                    evict(p);
            for (int p = max(0, w + 1 - wf); w + 1 < L && p <= min(L - 1, w + 1 + wf); p++)
                if (p != w + 1)
                    put(p % R, read(syn0 + (size_t)__ldg(tok + p) * d));
            continue;
        }
        if (out >= 0)
            evict(out);
        if (in < L) {
            if (out >= 0 && __ldg(tok + out) == inId)
                cn = read(syn0 + (size_t)inId * d);
            put(in % R, cn);
        }
    }
    for (int p = max(0, L - wf); !fresh && p < L; p++)
        evict(p);
}

extern "C" __global__ void __launch_bounds__(1024)
    w2v_sgns_block(float *syn0, float *syn1, const int *tok, const int *neg, const int *starts, const int *lens,
                   const float *alphas, const float *tab, int first, int nsent, int base, int d, int wf, int n,
                   int fresh)
{
    W2V_SHARED_ARRAY(float, w2v_block_shared);
    w2v_table_to_shared(w2v_block_shared, tab);
    float *red = w2v_block_shared + W2V_EXP_TABLE; // [2][32]
    float *ring = red + 2 * 32;
    for (int i = blockIdx.x; i < nsent; i += gridDim.x) {
        const int at = __ldg(starts + first + i) - base;
        w2v_sgns_block_sentence(syn0, syn1, tok + at, neg + (long long)at * n, __ldg(lens + i), __ldg(alphas + i),
                                w2v_block_shared, d, wf, n, fresh, ring, red);
        // The next sentence reuses the ring and the reduction slots.
        __syncthreads();
    }
}

// ---- Wombat (Simonton and Alaghband): host-assembled tiles and pairs ----
//
// The host cuts every window's output x context pairs into tiles of 4
// outputs x at most 8 contexts and single pairs (kernels/w2v/wombat_plan.go
// defines the records and, in trainPlan, the arithmetic, which these
// kernels follow with _rn intrinsics). A window is stored once (alpha's
// bits, nc, its nc contexts, its outputs with the label in bit 31); a tile
// or pair is two ints, its window's offset and j << 8 | i (tile: outputs
// j..j+3, contexts i..) or j << 8 | c (pair: output j, context c). Both objectives use them: for
// hierarchical softmax (hs) the outputs are inner nodes of the Huffman
// tree and a pair with |f| >= 6 trains nothing, as in word2vec.

#define WOMBAT_TILE_INTS 2
#define WOMBAT_PAIR_INTS 2
#define WOMBAT_ROW_MASK 0x7fffffff
// Warps (tiles or pairs at once) per block.
#define WOMBAT_WARPS 4
// Elements per lane of a row wombat_windows reads at once: 128 of a row.
#define WOMBAT_CHUNK 4

extern "C" {
__device__ int wombat_tile_ints = WOMBAT_TILE_INTS;
__device__ int wombat_warps = WOMBAT_WARPS;
}

// wombat_gradient is g for label and f: negative sampling's saturating
// one, or hierarchical softmax's, which trains nothing (train false, g 0)
// outside (-6, 6).
__device__ __forceinline__ float wombat_gradient(float f, float label, float alpha, const float *tab, int hs,
                                                 bool &train)
{
    train = !(hs && (f <= -W2V_MAX_EXP || f >= W2V_MAX_EXP));
    return train ? w2v_gradient(f, label, alpha, tab) : 0.0f;
}

// wombat_col_sum is an element of G^T Wo for context column c: the 4
// output rows' g*o, (r0+r2) + (r1+r3), g holding a 4x8 tile's g's by row.
__device__ __forceinline__ float wombat_col_sum(const float *g, const float (&o)[4], int c)
{
    const float u0 = __fmul_rn(g[c], o[0]), u1 = __fmul_rn(g[8 + c], o[1]);
    const float u2 = __fmul_rn(g[16 + c], o[2]), u3 = __fmul_rn(g[24 + c], o[3]);
    return __fadd_rn(__fadd_rn(u0, u2), __fadd_rn(u1, u3));
}

// wombat_row_sum is an element of G Wi for output row r: the 8 context
// columns' g*x, ((c0+c4) + (c2+c6)) + ((c1+c5) + (c3+c7)); an idle column
// has g and x 0 and adds 0.
__device__ __forceinline__ float wombat_row_sum(const float *g, const float (&x)[8], int r)
{
    float v[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        v[j] = __fmul_rn(g[8 * r + j], x[j]);
    return __fadd_rn(__fadd_rn(__fadd_rn(v[0], v[4]), __fadd_rn(v[2], v[6])),
                     __fadd_rn(__fadd_rn(v[1], v[5]), __fadd_rn(v[3], v[7])));
}

// wombat_tiles is the matrix kernel (Algorithm 3): warp w of the grid
// trains tiles w, w + (warps in the grid), ... The warp reads the 4 output
// rows and the tile's context rows into shared memory a row at a time (32
// lanes on consecutive elements), rows padded to d+1 floats. Lane (r, c) =
// (lane / 8, lane % 8) computes the pair of output r and context c, f and
// g, and leaves g in shared memory; then lane j owns elements j, j+32, ...
// of every row and sums, for each, G^T Wo over the 4 rows and G Wi over
// the 8 columns in trainPlan's order, an idle column adding 0, and adds
// each sum to its row by an atomic: a warp's 32 atomics fall on 32
// consecutive floats of one row. Shared memory: the logistic table, then
// per warp 12 padded rows and the 32 g's.
extern "C" __global__ void __launch_bounds__(32 * WOMBAT_WARPS)
    wombat_tiles(float *syn0, float *syn1, const int *__restrict__ tiles, const int *__restrict__ windows,
                 const float *tab, int ntiles, int d, int hs)
{
    W2V_SHARED_ARRAY(float, wombat_tile_shared);
    w2v_table_to_shared(wombat_tile_shared, tab);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, per = blockDim.x >> 5;
    const int ds = d + 1;
    float *wo = wombat_tile_shared + W2V_EXP_TABLE + (size_t)warp * (12 * ds + 32);
    float *wi = wo + 4 * ds;
    float *gs = wi + 8 * ds;
    const int r = lane >> 3, c = lane & 7;
    for (int t = blockIdx.x * per + warp; t < ntiles; t += gridDim.x * per) {
        const int *W = windows + __ldg(tiles + (size_t)t * WOMBAT_TILE_INTS);
        const int jc = __ldg(tiles + (size_t)t * WOMBAT_TILE_INTS + 1);
        const int ncw = __ldg(W + 1), i0 = jc & 255;
        const int nc = min(8, ncw - i0);
        const float alpha = __int_as_float(__ldg(W));
        // O: the tile's 4 outputs (label in bit 31), C: its contexts.
        const int *O = W + 2 + ncw + (jc >> 8), *C = W + 2 + i0;
        int bits = 0;
#pragma unroll
        for (int k = 0; k < 4; k++)
            bits |= (int)((unsigned)__ldg(O + k) >> 31) << k;
        for (int q = 0; q < 4 + nc; q++) {
            const float *src = q < 4 ? syn1 + (size_t)(__ldg(O + q) & WOMBAT_ROW_MASK) * d : syn0 + (size_t)__ldg(C + q - 4) * d;
            float *dst = q < 4 ? wo + q * ds : wi + (q - 4) * ds;
            for (int e = lane; e < d; e += 32)
                dst[e] = W2V_LDCG(src + e);
        }
        __syncwarp();
        float g = 0.0f;
        if (c < nc) {
            float f = 0.0f;
            for (int e = 0; e < d; e++)
                f = __fadd_rn(f, __fmul_rn(wo[r * ds + e], wi[c * ds + e]));
            bool train;
            g = wombat_gradient(f, (bits >> r) & 1 ? 1.0f : 0.0f, alpha, wombat_tile_shared, hs, train);
        }
        gs[lane] = g;
        __syncwarp();
        for (int e = lane; e < d; e += 32) {
            float o[4];
#pragma unroll
            for (int k = 0; k < 4; k++)
                o[k] = wo[k * ds + e];
#pragma unroll
            for (int k = 0; k < 8; k++)
                if (k < nc)
                    atomicAdd(syn0 + (size_t)__ldg(C + k) * d + e, wombat_col_sum(gs, o, k));
            float x[8];
#pragma unroll
            for (int k = 0; k < 8; k++)
                x[k] = k < nc ? wi[k * ds + e] : 0.0f;
#pragma unroll
            for (int k = 0; k < 4; k++)
                atomicAdd(syn1 + (size_t)(__ldg(O + k) & WOMBAT_ROW_MASK) * d + e, wombat_row_sum(gs, x, k));
        }
        // The next tile overwrites the rows and g's, and reads what these
        // atomics wrote when it names the same rows.
        __syncwarp();
    }
}

// wombat_pairs is the vector kernel (Algorithm 4): warp w of the grid
// trains pairs w, w + (warps in the grid), ... Lane j holds elements j,
// j+32, ... of both rows (read into shared memory), sums its products in
// order from 0, and the warp adds the lane sums by butterfly (the warp
// layout's dot product); then syn0 += g*o and syn1 += g*c(old) by atomics.
// Shared memory: the logistic table, then 2 rows per warp.
extern "C" __global__ void __launch_bounds__(32 * WOMBAT_WARPS)
    wombat_pairs(float *syn0, float *syn1, const int *__restrict__ pairs, const int *__restrict__ windows,
                 const float *tab, int npairs, int d, int hs)
{
    W2V_SHARED_ARRAY(float, wombat_pair_shared);
    w2v_table_to_shared(wombat_pair_shared, tab);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, per = blockDim.x >> 5;
    float *os = wombat_pair_shared + W2V_EXP_TABLE + (size_t)warp * 2 * d;
    float *cs = os + d;
    for (int t = blockIdx.x * per + warp; t < npairs; t += gridDim.x * per) {
        const int *W = windows + __ldg(pairs + (size_t)t * WOMBAT_PAIR_INTS);
        const int jc = __ldg(pairs + (size_t)t * WOMBAT_PAIR_INTS + 1);
        const int o = __ldg(W + 2 + __ldg(W + 1) + (jc >> 8));
        float *orow = syn1 + (size_t)(o & WOMBAT_ROW_MASK) * d, *crow = syn0 + (size_t)__ldg(W + 2 + (jc & 255)) * d;
        const float label = o < 0 ? 1.0f : 0.0f, alpha = __int_as_float(__ldg(W));
        float part = 0.0f;
        for (int e = lane; e < d; e += 32) {
            const float o = W2V_LDCG(orow + e), x = W2V_LDCG(crow + e);
            os[e] = o;
            cs[e] = x;
            part = __fadd_rn(part, __fmul_rn(x, o));
        }
#pragma unroll
        for (int m = 16; m >= 1; m >>= 1)
            part = __fadd_rn(part, __shfl_xor_sync(0xffffffffu, part, m));
        bool train;
        const float g = wombat_gradient(part, label, alpha, wombat_pair_shared, hs, train);
        if (train) {
            for (int e = lane; e < d; e += 32) {
                atomicAdd(crow + e, __fmul_rn(g, os[e]));
                atomicAdd(orow + e, __fmul_rn(g, cs[e]));
            }
        }
        __syncwarp();
    }
}

// wombat_fold is a step of wombat_windows's transposed butterfly: a lane
// keeps the half of its M*2 sums whose index has its lane's bit M and adds
// the other lane's of the same index, leaving M.
template <int M> __device__ __forceinline__ void wombat_fold(float *p, int lane)
{
    const bool up = lane & M;
#pragma unroll
    for (int q = 0; q < M; q++) {
        // Both read before either is chosen: a choice between two
        // elements' addresses would leave p in local memory.
        const float lo = p[q], hi = p[q + M];
        const float send = up ? lo : hi, keep = up ? hi : lo;
        p[q] = __fadd_rn(keep, __shfl_xor_sync(0xffffffffu, send, M));
    }
}

// wombat_load_chunk reads elements e, e+32, ... (WOMBAT_CHUNK of them) of
// the first n of R rows into v, 0 for the others and past d. Every load is
// issued before any is used: W2V_LDCG's memory clobber keeps them in
// order, and a loop that used each load before the next waited for each
// in turn.
template <int R>
__device__ __forceinline__ void wombat_load_chunk(float (&v)[R][WOMBAT_CHUNK], const float *w, const int *rows, int n,
                                                  int d, int e)
{
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int q = 0; q < WOMBAT_CHUNK; q++)
            v[r][q] = r < n && e + 32 * q < d ? W2V_LDCG(w + (size_t)rows[r] * d + e + 32 * q) : 0.0f;
}

// wombat_windows trains a whole window per warp: warp w of the grid trains
// windows w, w + (warps in the grid), ..., window i being
// windows[starts[i]] .. windows[starts[i+1]] - 1 (its k outputs follow its
// nc contexts). For each group of at most 8 contexts, it reads their rows
// once, then for each group of at most 4 outputs (a 4x8 sub-matrix, the
// last with idle rows) computes the 32 dot products at once: lane j sums
// its elements j, j+32, ... of every output x context product in order
// from 0, and a transposed butterfly (31 shuffles, the warp layout's sum
// tree) leaves pair (r, c)'s f in lane 8r + c, whose g goes to shared
// memory. Then lane j, for each of its elements, adds G Wi to the output
// rows by atomics and accumulates G^T Wo for the contexts in shared
// memory, which it adds to their rows once the window's outputs are done.
// A lane touches only its own elements of the rows, so the rows need no
// barrier; the g's do. The window's contexts meet every output as the
// rows were when the window began (Algorithm 1); each output group sees
// what the groups before it wrote. Shared memory: the logistic table, then
// per warp 8 context rows, their 8 update rows, 4 output rows (d floats
// each) and 32 g's.
extern "C" __global__ void __launch_bounds__(32 * WOMBAT_WARPS)
    wombat_windows(float *syn0, float *syn1, const int *__restrict__ starts, const int *__restrict__ windows,
                   const float *tab, int nwindows, int d, int hs)
{
    W2V_SHARED_ARRAY(float, wombat_window_shared);
    w2v_table_to_shared(wombat_window_shared, tab);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, per = blockDim.x >> 5;
    float *wi = wombat_window_shared + W2V_EXP_TABLE + (size_t)warp * (20 * (size_t)d + 32);
    float *ui = wi + 8 * d;
    float *wo = ui + 8 * d;
    float *gs = wo + 4 * d;
    for (int w = blockIdx.x * per + warp; w < nwindows; w += gridDim.x * per) {
        const int s0 = __ldg(starts + w), s1 = __ldg(starts + w + 1);
        const int *W = windows + s0;
        const float alpha = __int_as_float(__ldg(W));
        const int ncw = __ldg(W + 1), k = s1 - s0 - 2 - ncw;
        const int *O = W + 2 + ncw;
        for (int i0 = 0; i0 < ncw; i0 += 8) {
            const int nc = min(8, ncw - i0);
            int crow[8];
#pragma unroll
            for (int c = 0; c < 8; c++)
                crow[c] = c < nc ? __ldg(W + 2 + i0 + c) : 0;
            for (int e0 = 0; e0 < d; e0 += 32 * WOMBAT_CHUNK) {
                float x[8][WOMBAT_CHUNK];
                wombat_load_chunk<8>(x, syn0, crow, nc, d, e0 + lane);
#pragma unroll
                for (int q = 0; q < WOMBAT_CHUNK; q++) {
                    const int e = e0 + lane + 32 * q;
                    if (e < d) {
#pragma unroll
                        for (int c = 0; c < 8; c++) {
                            wi[c * d + e] = x[c][q];
                            ui[c * d + e] = 0.0f;
                        }
                    }
                }
            }
            for (int j = 0; j < k; j += 4) {
                const int nr = min(4, k - j);
                int orow[4], bits = 0;
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const int o = r < nr ? __ldg(O + j + r) : 0;
                    orow[r] = o & WOMBAT_ROW_MASK;
                    bits |= (int)((unsigned)o >> 31) << r;
                }
                // Lane partials of the 32 products, index 8r + c.
                float p[32] = {};
                for (int e0 = 0; e0 < d; e0 += 32 * WOMBAT_CHUNK) {
                    float o[4][WOMBAT_CHUNK];
                    wombat_load_chunk<4>(o, syn1, orow, nr, d, e0 + lane);
#pragma unroll
                    for (int q = 0; q < WOMBAT_CHUNK; q++) {
                        const int e = e0 + lane + 32 * q;
                        if (e < d) {
                            float x[8];
#pragma unroll
                            for (int c = 0; c < 8; c++)
                                x[c] = wi[c * d + e];
#pragma unroll
                            for (int r = 0; r < 4; r++) {
                                wo[r * d + e] = o[r][q];
#pragma unroll
                                for (int c = 0; c < 8; c++)
                                    p[8 * r + c] = __fadd_rn(p[8 * r + c], __fmul_rn(o[r][q], x[c]));
                            }
                        }
                    }
                }
                // Transposed butterfly: lane 8r + c ends with the sum for
                // (r, c).
                wombat_fold<16>(p, lane);
                wombat_fold<8>(p, lane);
                wombat_fold<4>(p, lane);
                wombat_fold<2>(p, lane);
                wombat_fold<1>(p, lane);
                const int r = lane >> 3, c = lane & 7;
                float g = 0.0f;
                if (r < nr && c < nc) {
                    bool train;
                    g = wombat_gradient(p[0], (bits >> r) & 1 ? 1.0f : 0.0f, alpha, wombat_window_shared, hs, train);
                }
                gs[lane] = g;
                __syncwarp();
                // The g's in registers: read from shared memory inside the
                // loop they would be read again for every element, the
                // compiler unable to tell them from the rows it stores.
                float G[32];
#pragma unroll
                for (int q = 0; q < 32; q++)
                    G[q] = gs[q];
                for (int e = lane; e < d; e += 32) {
                    float o[4], x[8];
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        o[q] = wo[q * d + e];
#pragma unroll
                    for (int q = 0; q < 8; q++)
                        x[q] = wi[q * d + e];
#pragma unroll
                    for (int q = 0; q < 8; q++)
                        if (q < nc)
                            ui[q * d + e] = __fadd_rn(ui[q * d + e], wombat_col_sum(G, o, q));
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        if (q < nr)
                            atomicAdd(syn1 + (size_t)orow[q] * d + e, wombat_row_sum(G, x, q));
                }
                // The next group overwrites the g's.
                __syncwarp();
            }
            for (int e = lane; e < d; e += 32) {
#pragma unroll
                for (int c = 0; c < 8; c++)
                    if (c < nc)
                        atomicAdd(syn0 + (size_t)crow[c] * d + e, ui[c * d + e]);
            }
        }
    }
}

// wombat_negatives draws a Wombat plan's negatives on the GPU, so that the
// host never reads the unigram table (its reads, a cache miss each, bound
// the host's plans and so Wombat's words/s). Thread i of the grid takes
// windows i, i + (threads in the grid), ..., window i being windows +
// starts[i]: its first output is the centre w (label bit set), and its
// first negative slot holds the centre's corpus position less the launch's
// base (base1 << 32 | base0); the thread restarts that token's stream,
// skips its subsampling word and writes the n negatives w2v_negative
// draws, one after another, over the n slots: sampler.go's negativesOf,
// the same numbers.
extern "C" __global__ void __launch_bounds__(32 * WOMBAT_WARPS)
    wombat_negatives(int *windows, const int *__restrict__ starts, const int *__restrict__ table, int nwindows,
                     unsigned tableSize, int vocab, int eos, int n, unsigned seed0, unsigned seed1, unsigned epoch,
                     unsigned base0, unsigned base1)
{
    const unsigned long long base = (unsigned long long)base1 << 32 | base0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nwindows; i += gridDim.x * blockDim.x) {
        int *W = windows + __ldg(starts + i);
        int *O = W + 2 + W[1];
        const int w = O[0] & WOMBAT_ROW_MASK;
        w2v_stream r(base + (unsigned)O[1], epoch, seed0, seed1);
        r.next();
        for (int j = 0; j < n; j++)
            O[1 + j] = w2v_negative(r, w, table, tableSize, vocab, eos);
    }
}
