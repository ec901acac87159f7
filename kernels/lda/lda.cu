// EZLDA's sampler on the GPU (Wang, Liu, Gaihre and Yu, SC 2020): one
// synchronous collapsed-Gibbs iteration as the kernels below, launched in
// order by kernels/lda/gpu.go. kernels/lda/doc.go defines what they
// compute (the integer weights, the canonical layout, the exact max-topic
// shortcut); kernels/lda/cpu.go computes the same in Go, token for token.
//
// Floating point: every operation whose result enters a weight is a single
// IEEE double operation written with an _rn intrinsic, so that nvcc cannot
// fuse a multiply and an add, and the Go side rounds each the same way.
// Everything after that is integer arithmetic, which any order of
// summation gets exactly.
//
// Every kernel works with any block of a power of two of threads up to
// LDA_THREADS (the host uses LDA_THREADS; the CPU emulator, smaller ones).
//
// Per iteration:
//   lda_topics, lda_tables      T -> denominators, shared-branch tables
//   lda_prep_dense, _sparse     W -> per-word φ̂, e prefixes, statistics
//   lda_sample_dense, _sparse   every token's new topic (three-branch):
//                               dense and medium words a block per unit,
//                               small words in chunks
//   lda_count_topics, lda_count_dense, lda_rows_small, lda_rows_large
//                               the rebuild of T, W and D from the topics
// plus lda_init (the initial topics), lda_ll_* (log-likelihood terms),
// lda_check_* (count invariants) and lda_philox_kat (the generator's
// known answers on the device).

typedef unsigned int u32;
typedef unsigned long long u64;

#define LDA_THREADS 256   // largest block any kernel is launched with
#define LDA_SMALL_ROW 32  // rows up to this long are rebuilt by one thread
#define LDA_SCALES 64     // rows of the shared-branch tables
#ifndef LDA_SAMPLE_BLOCKS
#define LDA_SAMPLE_BLOCKS 4 // resident sampling blocks an SM is compiled for (64 registers)
#endif
#define LDA_MIN_SCALE 31  // scale exponent of table row 0

// The host reads these to check that it was built with the same values.
extern "C" {
__device__ int lda_threads = LDA_THREADS;
__device__ int lda_small_row = LDA_SMALL_ROW;
__device__ int lda_scales = LDA_SCALES;
}

#ifndef LDA_DYNAMIC_SHARED
#define LDA_DYNAMIC_SHARED(type, name)                      \
    extern __shared__ __align__(16) unsigned char lda_smem[]; \
    type *name = (type *)lda_smem
#endif

// ---- Philox4x32-10 (Random123), as kernels/lda/philox.go ----

__device__ __forceinline__ void lda_philox(u32 c[4], u32 k0, u32 k1)
{
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        u32 hi0 = __umulhi(0xD2511F53u, c[0]), lo0 = 0xD2511F53u * c[0];
        u32 hi1 = __umulhi(0xCD9E8D57u, c[2]), lo1 = 0xCD9E8D57u * c[2];
        u32 n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
}

// lda_uniform is the 64-bit uniform of corpus token tok in iteration iter.
__device__ __forceinline__ u64 lda_uniform(u64 seed, u32 iter, u32 tok)
{
    u32 c[4] = {tok, iter, 0u, 0u};
    lda_philox(c, (u32)seed, (u32)(seed >> 32));
    return (u64)c[0] | ((u64)c[1] << 32);
}

// lda_scale_uniform is floor(r·total / 2^64).
__device__ __forceinline__ u64 lda_scale_uniform(u64 r, u64 total) { return __umul64hi(r, total); }

// ---- The definitions of doc.go's "Integer weights" ----

__device__ __forceinline__ double lda_phi(u32 w, double denom, double beta)
{
    return __ddiv_rn(__dadd_rn((double)w, beta), denom);
}

__device__ __forceinline__ int lda_scale(double bound)
{
    int e;
    frexp(bound, &e);
    return 32 - e;
}

__device__ __forceinline__ u32 lda_qphi(double phi, int s) { return (u32)ldexp(phi, s); }

__device__ __forceinline__ u64 lda_qalpha(double phi, double alpha, int s)
{
    return (u64)ldexp(__dmul_rn(alpha, phi), s);
}

// lda_g is g_s[k] from the table row's inclusive prefix.
__device__ __forceinline__ u64 lda_g(const u64 *gp, u32 k) { return k == 0 ? gp[0] : gp[k] - gp[k - 1]; }

// ---- Block-wide helpers (buf has blockDim.x entries; callers
// synchronise before reusing it) ----

// lda_scan is the inclusive prefix sum of v over the block's threads.
__device__ u64 lda_scan(u64 v, u64 *buf)
{
    u32 t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (u32 off = 1; off < blockDim.x; off <<= 1) {
        u64 add = t >= off ? buf[t - off] : 0;
        __syncthreads();
        buf[t] += add;
        __syncthreads();
    }
    return buf[t];
}

__device__ double lda_block_min(double v, double *buf)
{
    u32 t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (u32 off = blockDim.x / 2; off > 0; off >>= 1) {
        if (t < off && buf[t + off] < buf[t])
            buf[t] = buf[t + off];
        __syncthreads();
    }
    return buf[0];
}

__device__ u32 lda_block_max_u32(u32 v, u32 *buf)
{
    u32 t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (u32 off = blockDim.x / 2; off > 0; off >>= 1) {
        if (t < off && buf[t + off] > buf[t])
            buf[t] = buf[t + off];
        __syncthreads();
    }
    return buf[0];
}

// ---- Initial topics ----

extern "C" __global__ void lda_init(const u32 *tokIdx, u32 n, u64 seed, u32 K, u32 *z)
{
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x) {
        u32 c[4] = {tokIdx[p], 0u, 0u, 0u};
        lda_philox(c, (u32)seed, (u32)(seed >> 32));
        z[p] = (u32)(((u64)c[0] * K) >> 32);
    }
}

// ---- Per-iteration constants ----

// lda_topics: one block. denom[k] = T[k] + V·β; consts = {min denom, zmax}.
extern "C" __global__ void lda_topics(const u32 *T, u32 K, double vbeta, double beta, double *denom, double *consts)
{
    __shared__ double buf[LDA_THREADS];
    double m = 1.7976931348623157e308; // DBL_MAX
    for (u32 k = threadIdx.x; k < K; k += blockDim.x) {
        double d = __dadd_rn((double)T[k], vbeta);
        denom[k] = d;
        if (d < m)
            m = d;
    }
    m = lda_block_min(m, buf);
    if (threadIdx.x == 0) {
        consts[0] = m;
        consts[1] = lda_phi(0, m, beta);
    }
}

// lda_tables: block i fills table row i (scale 31+i) if that scale can
// occur: zphi (φ̂ of a zero count), gpre (inclusive prefix of g), zphiMax;
// block 0 also writes the number of rows in use to *nscales.
extern "C" __global__ void lda_tables(const double *denom, const double *consts, u32 K, double alpha, double beta,
                                      u32 *zphi, u64 *gpre, u32 *zphiMax, u32 *nscales)
{
    __shared__ u64 buf[LDA_THREADS];
    double zmax = consts[1];
    int shi = lda_scale(zmax);
    int s = LDA_MIN_SCALE + (int)blockIdx.x;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *nscales = (u32)(shi - LDA_MIN_SCALE + 1);
    if (s > shi)
        return;
    u64 row = (u64)blockIdx.x * K, carry = 0;
    for (u32 base = 0; base < K; base += blockDim.x) {
        u32 k = base + threadIdx.x;
        u64 g = 0;
        if (k < K) {
            double phi = lda_phi(0, denom[k], beta);
            zphi[row + k] = lda_qphi(phi, s);
            g = lda_qalpha(phi, alpha, s);
        }
        u64 pre = lda_scan(g, buf) + carry;
        if (k < K)
            gpre[row + k] = pre;
        carry += buf[blockDim.x - 1];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        zphiMax[blockIdx.x] = lda_qphi(zmax, s);
}

// Word statistics: ws32[4w..] = {s, kmax, a1, a2}, ws64[3w..] = {e1, ew, A}.

// lda_prep_dense: block per dense word.
extern "C" __global__ void lda_prep_dense(const u32 *Wd, u32 K, const double *denom, const double *consts, double alpha,
                                          double beta, const u32 *zphiMax, const u64 *gpre, u32 *phiD, u64 *epreD,
                                          u32 *ws32, u64 *ws64)
{
    __shared__ double bestBuf[LDA_THREADS];
    __shared__ u32 kBuf[LDA_THREADS];
    __shared__ u64 buf[LDA_THREADS];
    __shared__ u64 e1Shared;
    u32 w = blockIdx.x, t = threadIdx.x;
    const u32 *row = Wd + (u64)w * K;
    double zmax = consts[1];
    // The max topic: largest φ among topics with tokens, smallest k on ties.
    double best = -1.0;
    u32 kbest = 0xffffffffu;
    for (u32 k = t; k < K; k += blockDim.x) {
        u32 n = row[k];
        if (n > 0) {
            double phi = lda_phi(n, denom[k], beta);
            if (phi > best) {
                best = phi;
                kbest = k;
            }
        }
    }
    bestBuf[t] = best;
    kBuf[t] = kbest;
    __syncthreads();
    for (u32 off = blockDim.x / 2; off > 0; off >>= 1) {
        if (t < off) {
            double b = bestBuf[t + off];
            u32 kb = kBuf[t + off];
            if (b > bestBuf[t] || (b == bestBuf[t] && kb < kBuf[t])) {
                bestBuf[t] = b;
                kBuf[t] = kb;
            }
        }
        __syncthreads();
    }
    best = bestBuf[0];
    u32 kmax = kBuf[0];
    int s = lda_scale(best > zmax ? best : zmax);
    const u64 *gp = gpre + (u64)(s - LDA_MIN_SCALE) * K;
    u32 a2 = 0;
    u64 carry = 0;
    if (t == 0)
        e1Shared = 0;
    __syncthreads();
    for (u32 base = 0; base < K; base += blockDim.x) {
        u32 k = base + t;
        u64 e = 0;
        if (k < K) {
            u32 n = row[k];
            double phi = lda_phi(n, denom[k], beta);
            u32 ph = lda_qphi(phi, s);
            phiD[(u64)w * K + k] = ph;
            if (n > 0) {
                e = lda_qalpha(phi, alpha, s) - lda_g(gp, k);
                if (k == kmax)
                    e1Shared = e;
                else if (ph > a2)
                    a2 = ph;
            }
        }
        u64 pre = lda_scan(e, buf) + carry;
        if (k < K)
            epreD[(u64)w * K + k] = pre;
        carry += buf[blockDim.x - 1];
        __syncthreads();
    }
    a2 = lda_block_max_u32(a2, kBuf);
    if (t == 0) {
        u32 zm = zphiMax[s - LDA_MIN_SCALE];
        ws32[4 * (u64)w + 0] = (u32)s;
        ws32[4 * (u64)w + 1] = kmax;
        ws32[4 * (u64)w + 2] = lda_qphi(best, s);
        ws32[4 * (u64)w + 3] = a2 > zm ? a2 : zm;
        ws64[3 * (u64)w + 0] = e1Shared;
        ws64[3 * (u64)w + 1] = carry;
        ws64[3 * (u64)w + 2] = carry + gp[K - 1];
    }
}

// lda_prep_sparse: thread per sparse word (words dense..V-1).
extern "C" __global__ void lda_prep_sparse(u32 dense, u32 V, const u32 *wordOff, u32 sparseBase, const u32 *wTop,
                                           const u32 *wCnt, const u32 *wLen, u32 K, const double *denom,
                                           const double *consts, double alpha, double beta, const u32 *zphiMax,
                                           const u64 *gpre, u32 *phiS, u64 *epreS, u32 *ws32, u64 *ws64)
{
    u64 w = (u64)dense + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= V || wordOff[w] == wordOff[w + 1])
        return;
    u32 base = wordOff[w] - sparseBase, n = wLen[w];
    const u32 *top = wTop + base, *cnt = wCnt + base;
    double zmax = consts[1], best = -1.0;
    u32 kmax = 0;
    for (u32 i = 0; i < n; i++) {
        double phi = lda_phi(cnt[i], denom[top[i]], beta);
        if (phi > best) {
            best = phi;
            kmax = top[i];
        }
    }
    int s = lda_scale(best > zmax ? best : zmax);
    const u64 *gp = gpre + (u64)(s - LDA_MIN_SCALE) * K;
    u32 a2 = zphiMax[s - LDA_MIN_SCALE];
    u64 e1 = 0, ew = 0;
    for (u32 i = 0; i < n; i++) {
        u32 k = top[i];
        double phi = lda_phi(cnt[i], denom[k], beta);
        u32 ph = lda_qphi(phi, s);
        phiS[base + i] = ph;
        u64 e = lda_qalpha(phi, alpha, s) - lda_g(gp, k);
        if (k == kmax)
            e1 = e;
        else if (ph > a2)
            a2 = ph;
        ew += e;
        epreS[base + i] = ew;
    }
    ws32[4 * w + 0] = (u32)s;
    ws32[4 * w + 1] = kmax;
    ws32[4 * w + 2] = lda_qphi(best, s);
    ws32[4 * w + 3] = a2;
    ws64[3 * w + 0] = e1;
    ws64[3 * w + 1] = ew;
    ws64[3 * w + 2] = ew + gp[K - 1];
}

// ---- Sampling ----
//
// A warp samples one token at a time (EZLDA, SaberLDA): its 32 lanes sum
// the document branch over the document's packed row, 128 entries (four
// coalesced loads a lane) at a time, and meet in a warp reduction; the
// search for the chosen entry gives each lane 4 consecutive entries, one
// scan and one ballot per 128. The integer weights make any lane order give
// the thread-at-a-time sampler's topic exactly. Tokens of one word in one
// document, adjacent in word-major order, share the document pass.
//
// ncu's per-instruction counts steer the code below: a token costs about
// 300 warp instructions (NYTimes-shaped corpus, K=1024, ~140 document
// topics a token), so per-entry overhead (a null test on the φ̂ row, 64-bit
// index arithmetic, a second load for the count) and per-token set-up
// decide the rate as much as the loads do.

#define LDA_FULL 0xffffffffu

// Shortcut modes (the kernels' shortcut argument).
#define LDA_SHORTCUT_OFF 0   // two-branch sampling
#define LDA_SHORTCUT_FIRST 1 // the bound test before the document branch
#define LDA_SHORTCUT_AFTER 2 // the document branch first (it yields b1 for
                             // free), then the same test: the same topics
                             // and counts, cheaper while the test rarely fires

__device__ __forceinline__ u64 lda_shfl64(u64 v, int src)
{
    u32 lo = __shfl_sync(LDA_FULL, (u32)v, src), hi = __shfl_sync(LDA_FULL, (u32)(v >> 32), src);
    return (u64)lo | ((u64)hi << 32);
}

__device__ __forceinline__ u64 lda_warp_sum(u64 v)
{
    for (int m = 16; m > 0; m >>= 1) {
        u32 lo = __shfl_xor_sync(LDA_FULL, (u32)v, m), hi = __shfl_xor_sync(LDA_FULL, (u32)(v >> 32), m);
        v += (u64)lo | ((u64)hi << 32);
    }
    return v;
}

// lda_warp_scan is the inclusive prefix sum of v over the warp's lanes.
// On the GPU the shuffle's own in-range predicate guards the add, which
// saves the two selects a step that the compiler makes of the C++ below.
__device__ __forceinline__ u64 lda_warp_scan(u64 v, u32 lane)
{
#ifdef __CUDA_ARCH__
    u32 lo = (u32)v, hi = (u32)(v >> 32);
#pragma unroll
    for (int off = 1; off < 32; off <<= 1)
        asm("{\n\t.reg .pred p;\n\t.reg .b32 tl, th;\n\t"
            "shfl.sync.up.b32 tl|p, %0, %2, 0, -1;\n\t"
            "shfl.sync.up.b32 th, %1, %2, 0, -1;\n\t"
            "@p add.cc.u32 %0, %0, tl;\n\t"
            "@p addc.u32 %1, %1, th;\n\t}"
            : "+r"(lo), "+r"(hi)
            : "r"(off));
    return (u64)lo | ((u64)hi << 32);
#else
    for (int off = 1; off < 32; off <<= 1) {
        u32 lo = __shfl_up_sync(LDA_FULL, (u32)v, off), hi = __shfl_up_sync(LDA_FULL, (u32)(v >> 32), off);
        if (lane >= (u32)off)
            v += (u64)lo | ((u64)hi << 32);
    }
    return v;
#endif
}

// lda_warp_first_above is the smallest i in [0, n) with value(i) > x, for
// a non-decreasing value whose value(n-1) > x: a 32-way search, so that a
// row of K entries takes two or three dependent loads instead of log2 K.
template <class F> __device__ __forceinline__ u32 lda_warp_first_above(u32 n, u64 x, u32 lane, F value)
{
    u32 lo = 0, hi = n - 1; // the answer is in [lo, hi]
    while (hi - lo >= 32) {
        u32 step = (hi - lo + 32) / 32, i = lo + lane * step;
        u32 m = __ballot_sync(LDA_FULL, i <= hi && value(i) > x);
        if (m == 0) {
            lo += (hi - lo) / step * step + 1; // past the last lane's index
        } else {
            u32 f = __ffs(m) - 1;
            hi = lo + f * step;
            lo = f == 0 ? lo : lo + (f - 1) * step + 1;
        }
    }
    u32 i = lo + lane;
    u32 m = __ballot_sync(LDA_FULL, i <= hi && value(i) > x);
    return lo + __ffs(m) - 1;
}

// lda_doc_count is packed document row (e, n)'s count of topic k, found by
// the warp.
__device__ __forceinline__ u32 lda_doc_count(const u32 *e, u32 shift, u32 n, u32 k, u32 lane)
{
    if (n == 0)
        return 0;
    const u32 mask = (1u << shift) - 1;
    if (e[n - 1] >> shift <= k) // the same for every lane
        return e[n - 1] >> shift == k ? e[n - 1] & mask : 0;
    u32 i = lda_warp_first_above(n, (u64)k, lane, [&](u32 j) { return (u64)(e[j] >> shift); });
    return i > 0 && e[i - 1] >> shift == k ? e[i - 1] & mask : 0;
}

// lda_sparse_phi is a sparse word's φ̂ of topic k: its row entry, or the
// shared zero-count value.
__device__ __forceinline__ u32 lda_sparse_phi(const u32 *sTop, const u32 *sPhi, u32 sLen, const u32 *zphiRow, u32 k)
{
    u32 lo = 0, hi = sLen;
    while (lo < hi) {
        u32 mid = (lo + hi) / 2;
        if (sTop[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sLen && sTop[lo] == k ? sPhi[lo] : zphiRow[k];
}

// LdaMode carries a shortcut mode as a type: each sampler is compiled once
// per mode, so that a mode's unused tests cost nothing a token.
template <u32 M> struct LdaMode {
    static constexpr u32 value = M;
};

// lda_with_mode calls body(LdaMode<shortcut>{}).
template <class F> __device__ __forceinline__ void lda_with_mode(u32 shortcut, F body)
{
    if (shortcut == LDA_SHORTCUT_OFF)
        body(LdaMode<LDA_SHORTCUT_OFF>{});
    else if (shortcut == LDA_SHORTCUT_FIRST)
        body(LdaMode<LDA_SHORTCUT_FIRST>{});
    else
        body(LdaMode<LDA_SHORTCUT_AFTER>{});
}

// LdaWord is a word's statistics for the iteration (ws32, ws64).
struct LdaWord {
    u32 s, kmax, a1, a2;
    u64 e1, ew, atot;
};

__device__ __forceinline__ LdaWord lda_word(const u32 *ws32, const u64 *ws64, u32 w)
{
    const u32 *a = ws32 + 4 * (u64)w;
    const u64 *b = ws64 + 3 * (u64)w;
    return LdaWord{a[0], a[1], a[2], a[3], b[0], b[1], b[2]};
}

// LdaDoc is a token's document: its packed row at dRow + lo with n
// entries (topic << shift | count), and its L tokens.
struct LdaDoc {
    u32 lo, n, L;
};

// LdaRun is what a warp keeps from one token to the next. Word-major order
// puts a word's tokens of one document together, and they have one
// distribution: the tokens after the first reuse its front interval, its
// bound and its document-branch sum S.
struct LdaRun {
    u64 front, bound, sdoc;
    bool haveFront, haveS;
};

// LdaWordRow is where a token's word keeps its φ̂ and its word branch: phi
// gives φ̂ of a topic; the word branch is searched in epreRow (a dense
// row's prefix of e, K entries) or, when that is null, in sEpre (a sparse
// row's prefix, by entry, topics sTop, sLen entries).
template <class Phi> struct LdaWordRow {
    Phi phi;
    const u64 *epreRow;
    const u32 *sTop;
    const u64 *sEpre;
    u32 sLen;
};

// lda_token samples, with the whole warp, a token of word st in document
// doc with uniform r; same says that the warp's previous token had the
// same word and document (run holds its figures). Every lane returns the
// topic; every lane adds 1 to took when the shortcut decided.
template <u32 MODE, class Phi>
__device__ __forceinline__ u32 lda_token(bool same, LdaDoc doc, u64 r, u32 lane, const LdaWord &st,
                                         const LdaWordRow<Phi> &row, const u64 *gpre, u32 K, const u32 *dRow,
                                         u32 shift, u32 &took, LdaRun &run)
{
    const u32 kmax = st.kmax, mask = (1u << shift) - 1;
    const u32 *ent = dRow + doc.lo;
    const u64 rest = st.atot - st.e1;
    if (!same) {
        run.haveFront = run.haveS = false;
        if (MODE == LDA_SHORTCUT_FIRST) {
            u32 b1 = lda_doc_count(ent, shift, doc.n, kmax, lane);
            run.front = (u64)b1 * st.a1 + st.e1;
            run.bound = (u64)(doc.L - b1) * st.a2 + rest;
            run.haveFront = true;
        }
    }
    if (MODE == LDA_SHORTCUT_FIRST && lda_scale_uniform(r, run.front + run.bound) < run.front) {
        took++;
        return kmax;
    }
    // The weight of an entry in the document branch: (u64)c·φ̂ (0 for kmax).
    auto weight = [&](u32 k, u32 c) -> u64 { return (u64)(k == kmax ? 0 : c) * row.phi(k); };
    if (!run.haveS) {
        // S: each lane sums its entries (lane-strided, four loads in
        // flight), then the warp adds; the entry of kmax gives b1.
        u64 s = 0;
        u32 b1 = 0;
        const u32 *ep = ent + lane;
        for (u32 i = lane; i < doc.n; i += 128, ep += 128) {
            u32 e[4];
#pragma unroll
            for (int b = 0; b < 4; b++)
                e[b] = b == 0 || i + 32 * b < doc.n ? ep[32 * b] : kmax << shift; // padding counts 0
#pragma unroll
            for (int b = 0; b < 4; b++) {
                u32 k = e[b] >> shift, c = e[b] & mask;
                b1 |= k == kmax ? c : 0; // kmax occurs once at most
                s += weight(k, c);
            }
        }
        run.sdoc = lda_warp_sum(s);
        run.haveS = true;
        if (!run.haveFront) {
            b1 = __reduce_or_sync(LDA_FULL, b1); // one lane at most holds kmax
            run.front = (u64)b1 * st.a1 + st.e1;
            run.bound = (u64)(doc.L - b1) * st.a2 + rest;
            run.haveFront = true;
        }
    }
    const u64 front = run.front, sdoc = run.sdoc;
    u64 x = lda_scale_uniform(r, front + sdoc + rest);
    if (x < front) {
        // A token the bound test decides has x <= x' < front (doc.go), so
        // mode after counts them here only.
        if (MODE == LDA_SHORTCUT_AFTER && lda_scale_uniform(r, front + run.bound) < front)
            took++;
        return kmax;
    }
    x -= front;
    if (x < sdoc) {
        // The entry whose interval holds x: each lane takes 4 consecutive
        // entries, so that one scan covers 128. From the nearer end:
        // walking the entries backwards, the one holding x is the first
        // whose suffix sum exceeds sdoc-1-x (both walks stop at the same
        // entry, since an entry of weight 0 holds no interval).
        auto walk = [&](auto dir, u64 y) -> u32 {
            u64 carry = 0;
            for (u32 g = 4 * lane; g < doc.n + 4 * lane; g += 128) {
                // Entry j of the walk is row entry dir(j); lane-local
                // inclusive prefixes pre[0..3].
                u32 k[4];
                u64 pre[4], sum = 0;
#pragma unroll
                for (int b = 0; b < 4; b++) {
                    u32 j = g + b, e = j < doc.n ? ent[dir(j)] : kmax << shift;
                    u32 kk = e >> shift, cc = e & mask;
                    k[b] = kk;
                    sum += weight(kk, cc);
                    pre[b] = sum;
                }
                u64 acc = carry + lda_warp_scan(sum, lane);
                u32 m = __ballot_sync(LDA_FULL, acc > y);
                if (m) {
                    u64 before = acc - sum;
                    u32 kk = k[3];
#pragma unroll
                    for (int b = 2; b >= 0; b--)
                        kk = before + pre[b] > y ? k[b] : kk;
                    return __shfl_sync(LDA_FULL, kk, __ffs(m) - 1);
                }
                carry = lda_shfl64(acc, 31);
            }
            return kmax; // not reached: the sum ends at sdoc > y
        };
        const u32 last = doc.n - 1;
        if (x < sdoc / 2)
            return walk([](u32 j) { return j; }, x);
        return walk([last](u32 j) { return last - j; }, sdoc - 1 - x);
    }
    x -= sdoc;
    if (x < st.ew - st.e1) {
        // Smallest index with prefix - (topic >= kmax ? e1 : 0) > x.
        const u64 e1 = st.e1;
        if (row.epreRow) {
            const u64 *epre = row.epreRow;
            return lda_warp_first_above(K, x, lane, [&](u32 i) { return epre[i] - (i >= kmax ? e1 : 0); });
        }
        const u32 *sTop = row.sTop;
        const u64 *sEpre = row.sEpre;
        u32 i = lda_warp_first_above(row.sLen, x, lane, [&](u32 j) { return sEpre[j] - (sTop[j] >= kmax ? e1 : 0); });
        return sTop[i];
    }
    x -= st.ew - st.e1;
    const u64 *gp = gpre + (u64)(st.s - LDA_MIN_SCALE) * K;
    return lda_warp_first_above(K, x, lane, [&](u32 i) { return gp[i]; });
}

// lda_sample_group: the warp samples tokens [base, min(base+32, hi)) of
// a unit: each lane first loads its own token's document and draws its
// uniform, the warp then samples the tokens one by one (sample(j, same,
// doc, r) for the token of lane j; key is the lane's token's word, or any
// value the same for the whole unit), and the lanes store their topics
// together.
template <class F>
__device__ __forceinline__ void lda_sample_group(u32 base, u32 hi, u32 lane, u32 key, const u32 *tokDoc,
                                                 const u32 *tokIdx, const u32 *docOff, const u32 *dLen, u64 seed,
                                                 u32 iter, u32 *znew, F sample)
{
    u32 p = base + lane, myz = 0;
    LdaDoc my{0xffffffffu, 0, 0}; // no document starts at ~0: lo < tokens <= 2^32-2
    u64 myr = 0;
    if (p < hi) {
        u32 d = tokDoc[p];
        my.lo = docOff[d];
        my.L = docOff[d + 1] - my.lo;
        my.n = dLen[d];
        myr = lda_uniform(seed, iter, tokIdx[p]);
    }
    u32 n = hi - base < 32 ? hi - base : 32, prevLo = 0xffffffffu, prevKey = 0;
    for (u32 j = 0; j < n; j++) {
        LdaDoc doc{__shfl_sync(LDA_FULL, my.lo, j), __shfl_sync(LDA_FULL, my.n, j), __shfl_sync(LDA_FULL, my.L, j)};
        u32 k = __shfl_sync(LDA_FULL, key, j);
        u32 z = sample(j, doc.lo == prevLo && k == prevKey, doc, lda_shfl64(myr, j));
        prevLo = doc.lo;
        prevKey = k;
        if (lane == j)
            myz = z;
    }
    if (p < hi)
        znew[p] = myz;
}

// lda_sample_dense: block per unit (word, lo, hi) of a dense word, or of a
// medium word when medium is set, from unit ubase on (a GPU's share); the
// word's φ̂ of every topic is staged in shared memory (K·4 bytes of dynamic
// shared memory): its dense row, or its sparse row expanded over the
// shared zero-count values.
extern "C" __global__ void __launch_bounds__(LDA_THREADS, LDA_SAMPLE_BLOCKS)
    lda_sample_dense(const u32 *units, u32 ubase, u32 medium, const u32 *phiD, const u64 *epreD, const u32 *wordOff,
                     u32 sparseBase, const u32 *wTop, const u32 *wLen, const u32 *phiS, const u64 *epreS,
                     const u32 *ws32, const u64 *ws64, const u32 *zphi, const u64 *gpre, u32 K, const u32 *tokDoc,
                     const u32 *tokIdx, const u32 *docOff, const u32 *dRow, u32 dShift, const u32 *dLen, u64 seed,
                     u32 iter, u32 shortcut, u32 *znew, u64 *nshort)
{
    LDA_DYNAMIC_SHARED(u32, rowBuf);
    u64 unit = (u64)ubase + blockIdx.x;
    u32 w = units[3 * unit], lo = units[3 * unit + 1], hi = units[3 * unit + 2];
    auto phi = [&](u32 k) { return rowBuf[k]; };
    LdaWordRow<decltype(phi)> row{phi, 0, 0, 0, 0};
    if (medium) {
        u32 base = wordOff[w] - sparseBase;
        row.sTop = wTop + base;
        row.sEpre = epreS + base;
        row.sLen = wLen[w];
        const u32 *zrow = zphi + (u64)(ws32[4 * (u64)w] - LDA_MIN_SCALE) * K;
        for (u32 k = threadIdx.x; k < K; k += blockDim.x)
            rowBuf[k] = zrow[k];
        __syncthreads();
        for (u32 i = threadIdx.x; i < row.sLen; i += blockDim.x)
            rowBuf[row.sTop[i]] = phiS[base + i];
    } else {
        row.epreRow = epreD + (u64)w * K;
        for (u32 k = threadIdx.x; k < K; k += blockDim.x)
            rowBuf[k] = phiD[(u64)w * K + k];
    }
    __syncthreads();
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, took = 0;
    const LdaWord st = lda_word(ws32, ws64, w);
    LdaRun run{};
    lda_with_mode(shortcut, [&](auto mode) {
        for (u32 base = lo + 32 * warp; base < hi; base += 32 * nwarps)
            lda_sample_group(base, hi, lane, 0, tokDoc, tokIdx, docOff, dLen, seed, iter, znew,
                             [&](u32, bool same, LdaDoc doc, u64 r) {
                                 return lda_token<decltype(mode)::value>(same, doc, r, lane, st, row, gpre, K, dRow,
                                                                         dShift, took, run);
                             });
    });
    if (took && lane == 0)
        atomicAdd(nshort, (u64)took);
}

// lda_sample_sparse: persistent blocks take units (lo, hi, first word,
// last word) of small words, ubase + *counter (zeroed before the launch),
// until nunits are taken: EZLDA's atomic hand-out of small words. A unit's warps
// take 32 tokens at a time.
extern "C" __global__ void __launch_bounds__(LDA_THREADS, LDA_SAMPLE_BLOCKS)
    lda_sample_sparse(const u32 *units, u32 ubase, u32 nunits, u32 *counter, const u32 *wordOff, u32 sparseBase,
                      const u32 *wTop, const u32 *wLen, const u32 *phiS, const u64 *epreS, const u32 *ws32,
                      const u64 *ws64, const u32 *zphi, const u64 *gpre, u32 K, const u32 *tokDoc, const u32 *tokIdx,
                      const u32 *docOff, const u32 *dRow, u32 dShift, const u32 *dLen, u64 seed, u32 iter,
                      u32 shortcut, u32 *znew, u64 *nshort)
{
    __shared__ u32 unitShared;
    u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, took = 0;
    LdaRun run{};
    lda_with_mode(shortcut, [&](auto mode) {
        for (;;) {
            if (threadIdx.x == 0)
                unitShared = atomicAdd(counter, 1u);
            __syncthreads();
            u32 u = unitShared;
            __syncthreads();
            if (u >= nunits)
                break;
            u64 unit = (u64)ubase + u;
            u32 lo = units[4 * unit], hi = units[4 * unit + 1], wlo = units[4 * unit + 2], whi = units[4 * unit + 3];
            for (u32 base = lo + 32 * warp; base < hi; base += 32 * nwarps) {
                // Each lane finds its own token's word first.
                u32 mya = wlo;
                if (base + lane < hi) {
                    u32 q = base + lane, b = whi;
                    while (mya < b) {
                        u32 mid = (mya + b + 1) / 2;
                        if (wordOff[mid] <= q)
                            mya = mid;
                        else
                            b = mid - 1;
                    }
                }
                lda_sample_group(base, hi, lane, mya, tokDoc, tokIdx, docOff, dLen, seed, iter, znew,
                                 [&](u32 j, bool same, LdaDoc doc, u64 r) {
                                     u32 a = __shfl_sync(LDA_FULL, mya, j), sbase = wordOff[a] - sparseBase;
                                     const LdaWord st = lda_word(ws32, ws64, a);
                                     const u32 *sTop = wTop + sbase, *sPhi = phiS + sbase, sLen = wLen[a];
                                     const u32 *zphiRow = zphi + (u64)(st.s - LDA_MIN_SCALE) * K;
                                     auto phi = [&](u32 k) { return lda_sparse_phi(sTop, sPhi, sLen, zphiRow, k); };
                                     LdaWordRow<decltype(phi)> row{phi, 0, sTop, epreS + sbase, sLen};
                                     return lda_token<decltype(mode)::value>(same, doc, r, lane, st, row, gpre, K,
                                                                             dRow, dShift, took, run);
                                 });
            }
        }
    });
    if (took && lane == 0)
        atomicAdd(nshort, (u64)took);
}

// ---- The rebuild ----

// lda_count_topics: T[k] += tokens with topic k (T zeroed before), through
// a shared-memory histogram of K counters.
extern "C" __global__ void lda_count_topics(const u32 *z, u32 n, u32 K, u32 *T)
{
    LDA_DYNAMIC_SHARED(u32, hist);
    for (u32 k = threadIdx.x; k < K; k += blockDim.x)
        hist[k] = 0;
    __syncthreads();
    for (u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x)
        atomicAdd(&hist[z[p]], 1u);
    __syncthreads();
    for (u32 k = threadIdx.x; k < K; k += blockDim.x)
        if (hist[k])
            atomicAdd(&T[k], hist[k]);
}

// lda_count_dense: block per dense unit; Wd (zeroed before) += its tokens,
// through a shared-memory histogram of K counters (K·4 bytes of dynamic
// shared memory): a unit's tokens are one word's, so a global atomic a
// token contended on one row (2.15 ms an iteration on the NYTimes-shaped
// corpus at K=1024, half the rebuild).
extern "C" __global__ void lda_count_dense(const u32 *units, const u32 *z, u32 K, u32 *Wd)
{
    LDA_DYNAMIC_SHARED(u32, hist);
    u32 w = units[3 * (u64)blockIdx.x], lo = units[3 * (u64)blockIdx.x + 1], hi = units[3 * (u64)blockIdx.x + 2];
    for (u32 k = threadIdx.x; k < K; k += blockDim.x)
        hist[k] = 0;
    __syncthreads();
    for (u32 p = lo + threadIdx.x; p < hi; p += blockDim.x)
        atomicAdd(&hist[z[p]], 1u);
    __syncthreads();
    u32 *row = Wd + (u64)w * K;
    for (u32 k = threadIdx.x; k < K; k += blockDim.x)
        if (hist[k])
            atomicAdd(&row[k], hist[k]); // a word's units share its row
}

// Sparse rows (a document's, or a sparse word's): row r's tokens are
// j in [off[r], off[r+1]), with topic z[idx[j]] (indirect) or z[j]; its
// (topic, count) pairs go, by topic, to top/cnt from off[r] - base, and
// their number to len[r].

// Rows of (topic, count) pairs are two arrays, top and cnt, or, when pack
// is nonzero, one array of topic << pack | count (document rows: the
// sampler then reads one word an entry instead of two; gpu.go picks pack
// so that every count fits).
__device__ __forceinline__ void lda_row_put(u32 *top, u32 *cnt, u32 pack, u32 i, u32 k, u32 c)
{
    if (pack) {
        top[i] = k << pack | c;
    } else {
        top[i] = k;
        cnt[i] = c;
    }
}
__device__ __forceinline__ u32 lda_row_top(const u32 *top, u32 pack, u32 i) { return pack ? top[i] >> pack : top[i]; }
__device__ __forceinline__ u32 lda_row_cnt(const u32 *top, const u32 *cnt, u32 pack, u32 i)
{
    return pack ? top[i] & ((1u << pack) - 1) : cnt[i];
}

// lda_rows_small: thread per row of at most LDA_SMALL_ROW tokens.
extern "C" __global__ void lda_rows_small(const u32 *rows, u32 nrows, const u32 *off, const u32 *idx, u32 indirect,
                                          const u32 *z, u32 base, u32 *top, u32 *cnt, u32 *len, u32 pack)
{
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nrows)
        return;
    u32 r = rows[i], lo = off[r], n = off[r + 1] - lo;
    u32 t[LDA_SMALL_ROW];
    for (u32 a = 0; a < n; a++) {
        u32 v = z[indirect ? idx[lo + a] : lo + a], b = a;
        for (; b > 0 && t[b - 1] > v; b--)
            t[b] = t[b - 1];
        t[b] = v;
    }
    u32 m = 0, out = lo - base;
    for (u32 a = 0; a < n;) {
        u32 b = a + 1;
        while (b < n && t[b] == t[a])
            b++;
        lda_row_put(top, cnt, pack, out + m, t[a], b - a);
        m++;
        a = b;
    }
    len[r] = m;
}

// lda_rows_large: block per row, through a shared-memory histogram of K
// counters, compacted in topic order.
extern "C" __global__ void lda_rows_large(const u32 *rows, const u32 *off, const u32 *idx, u32 indirect, const u32 *z,
                                          u32 K, u32 base, u32 *top, u32 *cnt, u32 *len, u32 pack)
{
    LDA_DYNAMIC_SHARED(u32, hist);
    __shared__ u64 buf[LDA_THREADS];
    u32 r = rows[blockIdx.x], lo = off[r], hi = off[r + 1];
    for (u32 k = threadIdx.x; k < K; k += blockDim.x)
        hist[k] = 0;
    __syncthreads();
    for (u32 j = lo + threadIdx.x; j < hi; j += blockDim.x)
        atomicAdd(&hist[z[indirect ? idx[j] : j]], 1u);
    __syncthreads();
    // Thread t compacts topics [t·per, (t+1)·per).
    u32 per = (K + blockDim.x - 1) / blockDim.x, k0 = threadIdx.x * per, k1 = k0 + per < K ? k0 + per : K;
    u32 mine = 0;
    for (u32 k = k0; k < k1; k++)
        mine += hist[k] != 0;
    u32 at = (u32)(lda_scan(mine, buf) - mine), out = lo - base;
    for (u32 k = k0; k < k1; k++)
        if (hist[k]) {
            lda_row_put(top, cnt, pack, out + at, k, hist[k]);
            at++;
        }
    if (threadIdx.x == blockDim.x - 1)
        len[r] = (u32)buf[blockDim.x - 1];
}

// ---- Log-likelihood terms: Σ lnΓ(c + x) - lnΓ(x) over nonzero counts,
// one partial sum per block (the host adds them in order) ----

__device__ void lda_block_sum(double v, double *buf, double *partial)
{
    u32 t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (u32 off = blockDim.x / 2; off > 0; off >>= 1) {
        if (t < off)
            buf[t] = __dadd_rn(buf[t], buf[t + off]);
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = buf[0];
}

// lda_ll_dense: the n counts of the dense rows, grid-stride.
extern "C" __global__ void lda_ll_dense(const u32 *c, u64 n, double x, double lgx, double *partial)
{
    __shared__ double buf[LDA_THREADS];
    double sum = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        if (c[i])
            sum += lgamma((double)c[i] + x) - lgx;
    lda_block_sum(sum, buf, partial);
}

// lda_ll_rows: rows [rlo, rhi) of a sparse matrix (entries from off[r] -
// base, len[r] of them), a thread per row.
extern "C" __global__ void lda_ll_rows(u32 rlo, u32 rhi, const u32 *off, u32 base, const u32 *len, const u32 *top,
                                       const u32 *cnt, u32 pack, double x, double lgx, double *partial)
{
    __shared__ double buf[LDA_THREADS];
    double sum = 0;
    u64 r = (u64)rlo + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rhi) {
        u32 lo = off[r] - base;
        for (u32 i = 0; i < len[r]; i++)
            sum += lgamma((double)lda_row_cnt(top, cnt, pack, lo + i) + x) - lgx;
    }
    lda_block_sum(sum, buf, partial);
}

// ---- Count invariants: errors[0] (word rows), [1] (document rows),
// [2] (topic totals) count the violations; colW and colD (zeroed before)
// receive the column sums ----

// lda_check_dense: block per dense word: the row sums to its tokens.
extern "C" __global__ void lda_check_dense(const u32 *Wd, const u32 *wordOff, u32 K, u32 *colW, u32 *errors)
{
    __shared__ u64 buf[LDA_THREADS];
    u32 w = blockIdx.x;
    u64 sum = 0;
    for (u32 k = threadIdx.x; k < K; k += blockDim.x) {
        u32 c = Wd[(u64)w * K + k];
        sum += c;
        if (c)
            atomicAdd(&colW[k], c);
    }
    lda_scan(sum, buf);
    if (threadIdx.x == 0 && buf[blockDim.x - 1] != (u64)(wordOff[w + 1] - wordOff[w]))
        atomicAdd(&errors[0], 1u);
}

// lda_check_rows: thread per row r in [rlo, rhi) of a sparse matrix:
// topics strictly increasing below K, counts positive, summing to the
// row's tokens.
extern "C" __global__ void lda_check_rows(u32 rlo, u32 rhi, const u32 *off, u32 base, const u32 *len, const u32 *top,
                                          const u32 *cnt, u32 pack, u32 K, u32 *col, u32 *errors, u32 which)
{
    u64 r = (u64)rlo + (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rhi)
        return;
    u32 lo = off[r] - base, n = len[r], tokens = off[r + 1] - off[r];
    u64 sum = 0;
    bool bad = n > tokens;
    for (u32 i = 0; i < n && !bad; i++) {
        u32 k = lda_row_top(top, pack, lo + i), c = lda_row_cnt(top, cnt, pack, lo + i);
        if (k >= K || c == 0 || (i > 0 && k <= lda_row_top(top, pack, lo + i - 1))) {
            bad = true;
            break;
        }
        sum += c;
        atomicAdd(&col[k], c);
    }
    if (bad || sum != tokens)
        atomicAdd(&errors[which], 1u);
}

// lda_check_topics: one block: T equals the column sums of W and of D,
// and sums to the n tokens.
extern "C" __global__ void lda_check_topics(const u32 *T, const u32 *colW, const u32 *colD, u32 K, u32 n, u32 *errors)
{
    __shared__ u64 buf[LDA_THREADS];
    u64 sum = 0;
    for (u32 k = threadIdx.x; k < K; k += blockDim.x) {
        sum += T[k];
        if (T[k] != colW[k] || T[k] != colD[k])
            atomicAdd(&errors[2], 1u);
    }
    lda_scan(sum, buf);
    if (threadIdx.x == 0 && buf[blockDim.x - 1] != n)
        atomicAdd(&errors[2], 1u);
}

// lda_philox_kat: out[4i..] = Philox4x32-10 of in[6i..] (counter, key).
extern "C" __global__ void lda_philox_kat(const u32 *in, u32 n, u32 *out)
{
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    u32 c[4] = {in[6 * i], in[6 * i + 1], in[6 * i + 2], in[6 * i + 3]};
    lda_philox(c, in[6 * i + 4], in[6 * i + 5]);
    for (int j = 0; j < 4; j++)
        out[4 * i + j] = c[j];
}
