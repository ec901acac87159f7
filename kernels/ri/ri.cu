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

// The hot-row retraining kernels (non-permuting windows, d a multiple of
// 4, V * d below 2^31). A block is persistent, one per SM, and takes the
// vectors' elements in slices of 4 * G: for each slice it first copies that
// slice of the `hot` most frequent terms' seed rows (term ids are in
// descending count) into shared memory, where about half of all context
// pairs find their row, and then its groups of G threads (4 elements each)
// take units from the slice's queue. A group lists a batch of occurrences'
// neighbours in shared memory (one thread per occurrence, so the window
// walk and the row addressing are done once, not by every thread) and
// then adds them up in the list's order, which is the summation order of
// ri_retrain_window: the sums are the same to the bit.
//
// Block b starts at slice b % stagger and goes through the slices in turn.
// With stagger 1 the grid does one slice at a time, so the cold rows it
// reads at a time are a quarter of the table (L2 keeps more of them); with
// stagger = the number of slices the slices run side by side, so a corpus
// whose largest units are a large share of a slice's work (the sliced
// lists of its most frequent terms) waits for them once, not per slice.
//
// RI_HOT_LIST is a group's list capacity: a batch takes min(G,
// (RI_HOT_LIST - RI_HOT_BATCH) / 2w) occurrences, so the host uses these
// kernels only for 2w <= RI_HOT_LIST - RI_HOT_BATCH. The list is padded to
// a multiple of RI_HOT_BATCH with a zero row (adding +0.0 leaves a sum
// unchanged: a sum from +0.0 is never -0.0), so the inner loop has no
// bounds, and RI_HOT_BATCH rows are loaded before their adds.
#define RI_HOT_LIST 1024
#define RI_HOT_BATCH 8

// RI_GROUP_SYNC is a barrier of the n threads of one group (named barrier
// id, 1 to 15; 0 is __syncthreads'); the CPU emulation defines its own.
#ifndef RI_GROUP_SYNC
#define RI_GROUP_SYNC(id, n) asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory")
#endif

extern "C" {
__device__ int ri_hot_list = RI_HOT_LIST;
__device__ int ri_hot_batch = RI_HOT_BATCH;
}

// Four consecutive elements, for 16-byte loads and stores.
struct alignas(16) riF4 {
    float x, y, z, w;
};

// RI_LOAD_GLOBAL4 and RI_LOAD_SHARED4 load 4 elements from seeds (through
// the read-only path) and from a hot row. They are PTX so that the
// compiler cannot merge the two sides of a hot-or-cold choice into one
// generic load, which it did (32 scalar generic loads per batch); the CPU
// emulation defines them as plain loads.
#ifndef RI_LOAD_GLOBAL4
__device__ __forceinline__ riF4 riLoadGlobal4(const float *p)
{
    riF4 v;
    asm volatile("{\n\t.reg .u64 a;\n\tcvta.to.global.u64 a, %4;\n\t"
                 "ld.global.nc.v4.f32 {%0, %1, %2, %3}, [a];\n\t}"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
}
__device__ __forceinline__ riF4 riLoadShared4(const float *p)
{
    riF4 v;
    asm volatile("{\n\t.reg .u64 a;\n\tcvta.to.shared.u64 a, %4;\n\t"
                 "ld.shared.v4.f32 {%0, %1, %2, %3}, [a];\n\t}"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
}
#define RI_LOAD_GLOBAL4(p) riLoadGlobal4(p)
#define RI_LOAD_SHARED4(p) riLoadShared4(p)
#endif

// groupScan returns the exclusive prefix sum of n over the G threads of a
// group (t its index, sc G ints of scratch) and sets total to the sum.
template <int G>
__device__ __forceinline__ int groupScan(int n, int *sc, int t, int bar, int &total)
{
    sc[t] = n;
    RI_GROUP_SYNC(bar, G);
    for (int s = 1; s < G; s <<= 1) {
        const int x = t >= s ? sc[t - s] : 0;
        RI_GROUP_SYNC(bar, G);
        sc[t] += x;
        RI_GROUP_SYNC(bar, G);
    }
    total = sc[G - 1];
    return sc[t] - n;
}

// retrainHot is the body of the hot-row kernels, with G threads per group.
// queue holds one zeroed counter per slice. Dynamic shared memory: hot + 1
// rows of 4G floats (the last one zeros), then per group RI_HOT_LIST + G +
// 1 ints. A list entry is a cold row's element offset in seeds (id * d),
// or the complement of a hot row's offset in shared memory.
template <int G>
__device__ __forceinline__ void retrainHot(const int *__restrict__ units, int nunits,
                                           const int *__restrict__ occ,
                                           const int *__restrict__ tok,
                                           const float *__restrict__ seeds, int d, int w, int hot,
                                           int stagger, int *__restrict__ queue,
                                           float *__restrict__ rows)
{
    constexpr int SL = 4 * G;
    constexpr int B = RI_HOT_BATCH;
    RI_SHARED_ARRAY(riF4, smem);
    float *hotRows = (float *)smem;
    const int grp = threadIdx.x / G, t = threadIdx.x - grp * G;
    int *list = (int *)(hotRows + (hot + 1) * SL) + grp * (RI_HOT_LIST + G + 1);
    int *sc = list + RI_HOT_LIST;
    int *ctl = sc + G;
    const int bar = grp + 1;
    const int per = min(G, (RI_HOT_LIST - B) / (2 * w));
    const int pad = ~(hot * SL);
    const int nslices = (d + SL - 1) / SL;
    for (int ys = 0; ys < nslices; ys++) {
        const int y = ((int)blockIdx.x % stagger + ys) % nslices;
        const int base = y * SL;
        __syncthreads(); // every group is done with the last slice's hot rows
        for (int i = threadIdx.x; i < (hot + 1) * G; i += blockDim.x) {
            const int r = i / G, c = i - r * G;
            const int e = base + 4 * c;
            riF4 *dst = (riF4 *)(hotRows + r * SL + 4 * c);
            if (r < hot && e < d)
                *dst = *(const riF4 *)(seeds + (long long)r * d + e);
            else
                *dst = riF4{0.0f, 0.0f, 0.0f, 0.0f};
        }
        __syncthreads();
        const int e = base + 4 * t;
        const bool in = e < d;
        // A thread past the end of the vector reads (and drops) its row's
        // first elements rather than test every load.
        const float *mySeeds = seeds + (in ? e : 0);
        const float *myHot = hotRows + 4 * t;
        for (;;) {
            if (t == 0)
                *ctl = atomicAdd(queue + y, 1);
            RI_GROUP_SYNC(bar, G);
            const int u = *ctl;
            RI_GROUP_SYNC(bar, G);
            if (u >= nunits)
                break;
            const int lo = units[3 * u], hi = units[3 * u + 1];
            const long long row = units[3 * u + 2];
            double acc[4] = {0.0, 0.0, 0.0, 0.0};
            for (int i0 = lo; i0 < hi; i0 += per) {
                // List this batch's neighbours, occurrence by occurrence.
                int p = 0, a = 0, b = -1, n = 0;
                if (t < per && i0 + t < hi) {
                    p = occ[i0 + t];
                    windowOf(tok, p, w, a, b);
                    n = b - a;
                }
                int total;
                int o = groupScan<G>(n, sc, t, bar, total);
                for (int q = a; q <= b; q++) {
                    if (q == p)
                        continue;
                    const int id = tok[q];
                    list[o++] = id < hot ? ~(id * SL) : id * d;
                }
                if (t < B && total + t < (total + B - 1) / B * B)
                    list[total + t] = pad;
                RI_GROUP_SYNC(bar, G);
                // Add them up in order.
                for (int j = 0; j < total; j += B) {
                    riF4 v[B];
#pragma unroll
                    for (int k = 0; k < B; k++) {
                        const int x = list[j + k];
                        if (x < 0)
                            v[k] = RI_LOAD_SHARED4(myHot + ~x);
                        else
                            v[k] = RI_LOAD_GLOBAL4(mySeeds + x);
                    }
#pragma unroll
                    for (int k = 0; k < B; k++) {
                        acc[0] = __dadd_rn(acc[0], (double)v[k].x);
                        acc[1] = __dadd_rn(acc[1], (double)v[k].y);
                        acc[2] = __dadd_rn(acc[2], (double)v[k].z);
                        acc[3] = __dadd_rn(acc[3], (double)v[k].w);
                    }
                }
                RI_GROUP_SYNC(bar, G); // the list is read before the next batch's
            }
            if (in) {
                riF4 out;
                out.x = __double2float_rn(acc[0]);
                out.y = __double2float_rn(acc[1]);
                out.z = __double2float_rn(acc[2]);
                out.w = __double2float_rn(acc[3]);
                *(riF4 *)(rows + row * d + e) = out;
            }
        }
    }
    __syncthreads(); // the block's threads leave together (the CPU emulation checks)
}

// ri_retrain_hot: groups of 128 threads (slices of 512 elements). Block:
// up to 8 groups (named barriers 1-8).
extern "C" __global__ void __launch_bounds__(1024, 1)
    ri_retrain_hot(const int *__restrict__ units, int nunits, const int *__restrict__ occ,
                   const int *__restrict__ tok, const float *__restrict__ seeds, int d, int w,
                   int hot, int stagger, int *__restrict__ queue, float *__restrict__ rows)
{
    retrainHot<128>(units, nunits, occ, tok, seeds, d, w, hot, stagger, queue, rows);
}

// ri_retrain_hot64 is ri_retrain_hot with groups of 64 threads (slices of
// 256 elements, twice the hot rows in the same shared memory). Block: up
// to 15 groups.
extern "C" __global__ void __launch_bounds__(960, 1)
    ri_retrain_hot64(const int *__restrict__ units, int nunits, const int *__restrict__ occ,
                     const int *__restrict__ tok, const float *__restrict__ seeds, int d, int w,
                     int hot, int stagger, int *__restrict__ queue, float *__restrict__ rows)
{
    retrainHot<64>(units, nunits, occ, tok, seeds, d, w, hot, stagger, queue, rows);
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
