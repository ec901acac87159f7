// Random indexing (Polok and Smrž, "Implementing Random Indexing on GPU",
// HPC 2011) in the paper's term-centric design: work is a slice of one
// term's occurrence list (a "unit": lo, hi and the row it sums into), so
// every term vector, or partial vector of a slice, is written by one block
// or one thread and no global atomics are needed; partial vectors of a
// frequent term's slices are added in slice order by the combine kernels.
// The Go package kernels/ri is the reference: its package comment defines
// the computation and the one summation order both follow, so results match
// bit for bit (term vectors are integers and match exactly in any order).
//
// Conventions shared with Go (kernels/ri/index.go):
//   - the token stream holds term ids, with -1 (RI_BOUNDARY) before, between
//     and after documents, so a window scan stops at it and never leaves the
//     array;
//   - an index-table entry is a position for +1 and its complement for -1;
//   - a neighbour at offset o = q - p is rotated by o mod d (element i moves
//     to i + o mod d) when permuting.
// Floating-point arithmetic uses the _rn intrinsics so that nvcc never
// contracts a multiply and an add into an FMA that Go would not do.
//
// Regenerate the committed PTX and fatbin with kernels/scripts/gen.sh.

#define RI_BOUNDARY (-1)
#define RI_GOLDEN 0x9e3779b97f4a7c15ULL
#define RI_FNV_OFFSET 0xcbf29ce484222325ULL
#define RI_FNV_PRIME 0x100000001b3ULL
#define RI_DOC_SALT 0x646f63756d656e74ULL

// Block size of the dense kernels (retraining, gather, combine, normalise),
// and the elements each thread of a dense kernel holds: a block covers
// RI_THREADS * RI_EPT elements of a vector per grid row (blockIdx.y).
#define RI_THREADS 256
#define RI_EPT 8
#define RI_CHUNK (RI_THREADS * RI_EPT)
// Neighbours whose seed rows are loaded together before being added in
// order (memory-level parallelism without changing the summation order).
#define RI_BATCH 4

// RI_SHARED_ARRAY declares the block's dynamic shared memory; the CPU
// emulation of this file (kernels/ri/internal/riemu) defines it its own way.
#ifndef RI_SHARED_ARRAY
#define RI_SHARED_ARRAY(type, name) extern __shared__ type name[]
#endif

// Constants the host reads rather than repeating.
extern "C" {
__device__ int ri_threads = RI_THREADS;
__device__ int ri_chunk = RI_CHUNK;
}

__device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// ri_index_vectors writes the index vectors of n keys, k entries each, into
// out (one thread per vector, grid-stride). With docs == 0 key i is the
// FNV-1a hash of bytes[offsets[i] : offsets[i+1]] (a term); with docs != 0
// it is mix64(i + RI_DOC_SALT) (document i) and bytes/offsets are unused.
extern "C" __global__ void ri_index_vectors(const unsigned char *__restrict__ bytes,
                                            const int *__restrict__ offsets, int n, int docs,
                                            unsigned long long seed, int k, int d,
                                            int *__restrict__ out)
{
    const unsigned long long mseed = mix64(seed);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned long long key;
        if (docs) {
            key = mix64((unsigned long long)i + RI_DOC_SALT);
        } else {
            key = RI_FNV_OFFSET;
            for (int b = offsets[i]; b < offsets[i + 1]; b++) {
                key ^= (unsigned long long)bytes[b];
                key *= RI_FNV_PRIME;
            }
        }
        const unsigned long long base = key ^ mseed;
        int *o = out + i * k;
        int cnt = 0;
        for (unsigned long long j = 1; cnt < k; j++) {
            const unsigned long long r = mix64(base + j * RI_GOLDEN);
            int pos = (int)(((r >> 32) * (unsigned long long)d) >> 32);
            bool dup = false;
            for (int m = 0; m < cnt; m++) {
                const int e = o[m];
                if (e == pos || ~e == pos) {
                    dup = true;
                    break;
                }
            }
            if (dup)
                continue;
            if (r & 1ULL)
                pos = ~pos;
            o[cnt++] = pos;
        }
    }
}

// windowOf returns in a and b the first and last positions within w of p in
// p's document.
__device__ __forceinline__ void windowOf(const int *__restrict__ tok, int p, int w, int &a,
                                         int &b)
{
    a = p;
    b = p;
    while (a > p - w && tok[a - 1] != RI_BOUNDARY)
        a--;
    while (b < p + w && tok[b + 1] != RI_BOUNDARY)
        b++;
}

// rotation is o mod d in [0, d).
__device__ __forceinline__ int rotation(int o, int d)
{
    int s = o % d;
    return s < 0 ? s + d : s;
}

// addIndexShared adds index vector v (k entries), rotated by sh, into the
// shared accumulator acc.
__device__ __forceinline__ void addIndexShared(int *acc, const int *__restrict__ v, int k, int d,
                                               int sh)
{
    for (int j = 0; j < k; j++) {
        const int ent = v[j];
        int pos = ent >= 0 ? ent : ~ent;
        pos += sh;
        if (pos >= d)
            pos -= d;
        atomicAdd(&acc[pos], ent >= 0 ? 1 : -1);
    }
}

// addIndexGlobal is addIndexShared for a row of global memory that only the
// calling thread writes.
__device__ __forceinline__ void addIndexGlobal(int *__restrict__ row, const int *__restrict__ v,
                                               int k, int d, int sh)
{
    for (int j = 0; j < k; j++) {
        const int ent = v[j];
        int pos = ent >= 0 ? ent : ~ent;
        pos += sh;
        if (pos >= d)
            pos -= d;
        row[pos] += ent >= 0 ? 1 : -1;
    }
}

// ri_tv_block computes term vectors with one block per unit: the block's
// threads take the unit's occurrences in turn and add their contexts' index
// vectors into a d-element accumulator in shared memory (integer atomics
// there are exact in any order), which is then stored as the unit's row.
// With window != 0 list holds stream positions and contexts are the window
// (idx the term table); with window == 0 list holds context ids (documents)
// and idx their table. Dynamic shared memory: d ints.
extern "C" __global__ void ri_tv_block(const int *__restrict__ units,
                                       const int *__restrict__ list,
                                       const int *__restrict__ tok,
                                       const int *__restrict__ idx, int k, int d, int w,
                                       int permute, int window, int *__restrict__ rows)
{
    RI_SHARED_ARRAY(int, acc);
    const long long u = blockIdx.x;
    const int lo = units[3 * u], hi = units[3 * u + 1];
    const long long row = units[3 * u + 2];
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        acc[e] = 0;
    __syncthreads();
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        const int p = list[i];
        if (!window) {
            addIndexShared(acc, idx + (long long)p * k, k, d, 0);
            continue;
        }
        int a, b;
        windowOf(tok, p, w, a, b);
        for (int q = a; q <= b; q++) {
            if (q == p)
                continue;
            const int sh = permute ? rotation(q - p, d) : 0;
            addIndexShared(acc, idx + (long long)tok[q] * k, k, d, sh);
        }
    }
    __syncthreads();
    int *out = rows + row * d;
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        out[e] = acc[e];
}

// ri_tv_warp is ri_tv_block with a warp per occurrence: the lanes share out
// the occurrence's (neighbour, entry) pairs, so the lanes reading one
// neighbour's index vector read consecutive words (one or two sectors
// instead of a sector per lane), and a warp's loop bounds are uniform.
// Same parameters, shared memory and result as ri_tv_block.
extern "C" __global__ void ri_tv_warp(const int *__restrict__ units,
                                      const int *__restrict__ list,
                                      const int *__restrict__ tok,
                                      const int *__restrict__ idx, int k, int d, int w,
                                      int permute, int window, int *__restrict__ rows)
{
    RI_SHARED_ARRAY(int, acc);
    const long long u = blockIdx.x;
    const int lo = units[3 * u], hi = units[3 * u + 1];
    const long long row = units[3 * u + 2];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        acc[e] = 0;
    __syncthreads();
    for (int i = lo + warp; i < hi; i += warps) {
        const int p = list[i];
        if (!window) {
            const int *v = idx + (long long)p * k;
            for (int x = lane; x < k; x += 32) {
                const int ent = v[x];
                atomicAdd(&acc[ent >= 0 ? ent : ~ent], ent >= 0 ? 1 : -1);
            }
            continue;
        }
        int a, b;
        windowOf(tok, p, w, a, b);
        const int total = (b - a) * k; // neighbours (the window less p) times entries
        for (int x = lane; x < total; x += 32) {
            const int j = x / k;
            int q = a + j;
            if (q >= p)
                q++;
            const int ent = idx[(long long)tok[q] * k + (x - j * k)];
            int pos = ent >= 0 ? ent : ~ent;
            if (permute) {
                pos += rotation(q - p, d);
                if (pos >= d)
                    pos -= d;
            }
            atomicAdd(&acc[pos], ent >= 0 ? 1 : -1);
        }
    }
    __syncthreads();
    int *out = rows + row * d;
    for (int e = threadIdx.x; e < d; e += blockDim.x)
        out[e] = acc[e];
}

// ri_tv_thread is the paper's kernel: one thread per unit, adding into the
// unit's own row of global memory (zeroed by the host), no atomics.
extern "C" __global__ void ri_tv_thread(const int *__restrict__ units, int nunits,
                                        const int *__restrict__ list,
                                        const int *__restrict__ tok,
                                        const int *__restrict__ idx, int k, int d, int w,
                                        int permute, int window, int *__restrict__ rows)
{
    const long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= nunits)
        return;
    const int lo = units[3 * u], hi = units[3 * u + 1];
    int *out = rows + (long long)units[3 * u + 2] * d;
    for (int i = lo; i < hi; i++) {
        const int p = list[i];
        if (!window) {
            addIndexGlobal(out, idx + (long long)p * k, k, d, 0);
            continue;
        }
        int a, b;
        windowOf(tok, p, w, a, b);
        for (int q = a; q <= b; q++) {
            if (q == p)
                continue;
            const int sh = permute ? rotation(q - p, d) : 0;
            addIndexGlobal(out, idx + (long long)tok[q] * k, k, d, sh);
        }
    }
}

// ri_combine_i32 adds each multi-slice term's partial rows into its output
// row. comb holds (output row, first partial row, count) triples; grid
// (combines, ceil(d / blockDim.x)).
extern "C" __global__ void ri_combine_i32(const int *__restrict__ comb, int d,
                                          int *__restrict__ rows)
{
    const long long c = blockIdx.x;
    const int e = blockIdx.y * blockDim.x + threadIdx.x;
    if (e >= d)
        return;
    const long long dst = comb[3 * c], first = comb[3 * c + 1];
    const int n = comb[3 * c + 2];
    int s = rows[first * d + e];
    for (int r = 1; r < n; r++)
        s += rows[(first + r) * d + e];
    rows[dst * d + e] = s;
}

// ri_combine_f32 is ri_combine_i32 for float32 rows: it adds in slice
// order, in double, and rounds once.
extern "C" __global__ void ri_combine_f32(const int *__restrict__ comb, int d,
                                          float *__restrict__ rows)
{
    const long long c = blockIdx.x;
    const int e = blockIdx.y * blockDim.x + threadIdx.x;
    if (e >= d)
        return;
    const long long dst = comb[3 * c], first = comb[3 * c + 1];
    const int n = comb[3 * c + 2];
    double s = (double)rows[first * d + e];
    for (int r = 1; r < n; r++)
        s = __dadd_rn(s, (double)rows[(first + r) * d + e]);
    rows[dst * d + e] = __double2float_rn(s);
}

// cursor walks a unit's (occurrence, neighbour) pairs in the summation
// order: occurrences in list order, neighbours in ascending position.
struct cursor {
    int i, hi; // the occurrence list index and its end
    int p;     // the occurrence's position
    int b;     // the last neighbour position of p
    int q;     // the current neighbour position
};

// advance moves c to the next pair; false at the end. Every thread of a
// block walks the same pairs, so the branches are uniform.
__device__ __forceinline__ bool advance(cursor &c, const int *__restrict__ occ,
                                        const int *__restrict__ tok, int w)
{
    c.q++;
    if (c.q == c.p)
        c.q++;
    while (c.q > c.b) {
        c.i++;
        if (c.i >= c.hi)
            return false;
        c.p = occ[c.i];
        int a;
        windowOf(tok, c.p, w, a, c.b);
        c.q = a == c.p ? a + 1 : a;
    }
    return true;
}

// ri_retrain_window is a retraining pass with window contexts: one block
// per (unit, chunk of RI_CHUNK elements), one thread per element (RI_EPT of
// them each, RI_THREADS apart). Every thread walks the unit's pairs in the
// summation order and adds the neighbour's seed element, rotated when
// permuting, in double; RI_BATCH neighbours' loads are issued before their
// adds. The row is the sum rounded to float32.
extern "C" __global__ void __launch_bounds__(RI_THREADS)
    ri_retrain_window(const int *__restrict__ units, const int *__restrict__ occ,
                      const int *__restrict__ tok, const float *__restrict__ seeds, int d,
                      int w, int permute, float *__restrict__ rows)
{
    const long long u = blockIdx.x;
    const int base = blockIdx.y * RI_CHUNK + threadIdx.x;
    cursor c;
    c.i = units[3 * u] - 1;
    c.hi = units[3 * u + 1];
    c.p = -2;
    c.b = -1;
    c.q = -1;
    const long long row = units[3 * u + 2];
    double acc[RI_EPT];
#pragma unroll
    for (int t = 0; t < RI_EPT; t++)
        acc[t] = 0.0;
    bool more = advance(c, occ, tok, w);
    while (more) {
        const float *src[RI_BATCH];
        int sh[RI_BATCH];
        int n = 0;
#pragma unroll
        for (int j = 0; j < RI_BATCH; j++) {
            if (more) {
                src[j] = seeds + (long long)tok[c.q] * d;
                sh[j] = permute ? rotation(c.q - c.p, d) : 0;
                n = j + 1;
                more = advance(c, occ, tok, w);
            }
        }
        float v[RI_BATCH][RI_EPT];
#pragma unroll
        for (int j = 0; j < RI_BATCH; j++) {
#pragma unroll
            for (int t = 0; t < RI_EPT; t++) {
                const int e = base + t * RI_THREADS;
                v[j][t] = 0.0f;
                if (j < n && e < d) {
                    int s = e - sh[j];
                    if (s < 0)
                        s += d;
                    v[j][t] = __ldg(src[j] + s);
                }
            }
        }
#pragma unroll
        for (int j = 0; j < RI_BATCH; j++) {
            if (j < n) {
#pragma unroll
                for (int t = 0; t < RI_EPT; t++)
                    acc[t] = __dadd_rn(acc[t], (double)v[j][t]);
            }
        }
    }
#pragma unroll
    for (int t = 0; t < RI_EPT; t++) {
        const int e = base + t * RI_THREADS;
        if (e < d)
            rows[row * d + e] = __double2float_rn(acc[t]);
    }
}

// ri_gather sums, per unit, the rows of src that list[lo:hi] names, in
// order, in double, rounding the sum to float32 (reflective retraining with
// document contexts: documents from their tokens' seeds, then terms from
// their documents). Grid and blocks as ri_retrain_window.
extern "C" __global__ void __launch_bounds__(RI_THREADS)
    ri_gather(const int *__restrict__ units, const int *__restrict__ list,
              const float *__restrict__ src, int d, float *__restrict__ rows)
{
    const long long u = blockIdx.x;
    const int base = blockIdx.y * RI_CHUNK + threadIdx.x;
    const int lo = units[3 * u], hi = units[3 * u + 1];
    const long long row = units[3 * u + 2];
    double acc[RI_EPT];
#pragma unroll
    for (int t = 0; t < RI_EPT; t++)
        acc[t] = 0.0;
    for (int i = lo; i < hi; i += RI_BATCH) {
        const int n = min(RI_BATCH, hi - i);
        float v[RI_BATCH][RI_EPT];
#pragma unroll
        for (int j = 0; j < RI_BATCH; j++) {
            const float *r = j < n ? src + (long long)list[i + j] * d : src;
#pragma unroll
            for (int t = 0; t < RI_EPT; t++) {
                const int e = base + t * RI_THREADS;
                v[j][t] = (j < n && e < d) ? __ldg(r + e) : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < RI_BATCH; j++) {
            if (j < n) {
#pragma unroll
                for (int t = 0; t < RI_EPT; t++)
                    acc[t] = __dadd_rn(acc[t], (double)v[j][t]);
            }
        }
    }
#pragma unroll
    for (int t = 0; t < RI_EPT; t++) {
        const int e = base + t * RI_THREADS;
        if (e < d)
            rows[row * d + e] = __double2float_rn(acc[t]);
    }
}

// normRow returns the Euclidean norm of the calling block's vector given
// each thread's lane sum, reduced pairwise in the order Go's reduceLanes
// uses. blockDim.x must be RI_THREADS (256).
__device__ __forceinline__ double normRow(double lane)
{
    __shared__ double lanes[RI_THREADS];
    lanes[threadIdx.x] = lane;
    __syncthreads();
    for (int s = RI_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            lanes[threadIdx.x] = __dadd_rn(lanes[threadIdx.x], lanes[threadIdx.x + s]);
        __syncthreads();
    }
    return __dsqrt_rn(lanes[0]);
}

// ri_normalise_i32 writes row blockIdx.x of x (int32 term vectors) scaled to
// unit length into out (float32); a zero row stays zero. Block: 256
// threads.
extern "C" __global__ void __launch_bounds__(RI_THREADS)
    ri_normalise_i32(const int *__restrict__ x, int d, float *__restrict__ out)
{
    const int *v = x + (long long)blockIdx.x * d;
    float *o = out + (long long)blockIdx.x * d;
    double s = 0.0;
    for (int e = threadIdx.x; e < d; e += RI_THREADS) {
        const double f = (double)v[e];
        s = __dadd_rn(s, __dmul_rn(f, f));
    }
    const double norm = normRow(s);
    for (int e = threadIdx.x; e < d; e += RI_THREADS)
        o[e] = norm == 0.0 ? 0.0f : __double2float_rn(__ddiv_rn((double)v[e], norm));
}

// ri_normalise_f32 is ri_normalise_i32 for float32 vectors.
extern "C" __global__ void __launch_bounds__(RI_THREADS)
    ri_normalise_f32(const float *__restrict__ x, int d, float *__restrict__ out)
{
    const float *v = x + (long long)blockIdx.x * d;
    float *o = out + (long long)blockIdx.x * d;
    double s = 0.0;
    for (int e = threadIdx.x; e < d; e += RI_THREADS) {
        const double f = (double)v[e];
        s = __dadd_rn(s, __dmul_rn(f, f));
    }
    const double norm = normRow(s);
    for (int e = threadIdx.x; e < d; e += RI_THREADS)
        o[e] = norm == 0.0 ? 0.0f : __double2float_rn(__ddiv_rn((double)v[e], norm));
}

// ri_row_sums writes the sum of row blockIdx.x's elements (int32) into
// out, as a 64-bit integer: the invariant the host checks. Block: 256
// threads.
extern "C" __global__ void __launch_bounds__(RI_THREADS)
    ri_row_sums(const int *__restrict__ x, int d, long long *__restrict__ out)
{
    __shared__ long long part[RI_THREADS];
    const int *v = x + (long long)blockIdx.x * d;
    long long s = 0;
    for (int e = threadIdx.x; e < d; e += RI_THREADS)
        s += v[e];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int st = RI_THREADS / 2; st > 0; st >>= 1) {
        if ((int)threadIdx.x < st)
            part[threadIdx.x] += part[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = part[0];
}
