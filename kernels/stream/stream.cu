// BabelStream's five kernels (copy, mul, add, triad, dot) in FP64, plus the
// initialisation and the on-device verification pass the stream workload
// runs after every iteration.
//
// Every kernel is a grid-stride loop over 16-byte double2 vectors (the widest
// access a thread can issue), with the odd last element, if any, handled by
// the first thread of the grid. The host sizes the grid; any size is correct.
// Arrays come from cuMemAlloc, so they are 256-byte aligned.
//
// Regenerate the committed PTX and fatbin with kernels/scripts/gen.sh.

#define GRID_STRIDE(i, n)                                                          \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

#define TAIL_THREAD (blockIdx.x == 0 && threadIdx.x == 0)

// stream_init sets every element of a, b and c to va, vb and vc.
extern "C" __global__ void stream_init(double *__restrict__ a, double *__restrict__ b,
                                       double *__restrict__ c, long long n, double va,
                                       double vb, double vc)
{
    GRID_STRIDE(i, n)
    {
        a[i] = va;
        b[i] = vb;
        c[i] = vc;
    }
}

// stream_copy: c[i] = a[i].
extern "C" __global__ void stream_copy(const double *__restrict__ a, double *__restrict__ c,
                                       long long n)
{
    const double2 *a2 = (const double2 *)a;
    double2 *c2 = (double2 *)c;
    GRID_STRIDE(i, n / 2) { c2[i] = a2[i]; }
    if ((n & 1) && TAIL_THREAD)
        c[n - 1] = a[n - 1];
}

// stream_mul: b[i] = scalar * c[i].
extern "C" __global__ void stream_mul(double *__restrict__ b, const double *__restrict__ c,
                                      double scalar, long long n)
{
    double2 *b2 = (double2 *)b;
    const double2 *c2 = (const double2 *)c;
    GRID_STRIDE(i, n / 2)
    {
        double2 x = c2[i];
        b2[i] = make_double2(scalar * x.x, scalar * x.y);
    }
    if ((n & 1) && TAIL_THREAD)
        b[n - 1] = scalar * c[n - 1];
}

// stream_add: c[i] = a[i] + b[i].
extern "C" __global__ void stream_add(const double *__restrict__ a, const double *__restrict__ b,
                                      double *__restrict__ c, long long n)
{
    const double2 *a2 = (const double2 *)a;
    const double2 *b2 = (const double2 *)b;
    double2 *c2 = (double2 *)c;
    GRID_STRIDE(i, n / 2)
    {
        double2 x = a2[i], y = b2[i];
        c2[i] = make_double2(x.x + y.x, x.y + y.y);
    }
    if ((n & 1) && TAIL_THREAD)
        c[n - 1] = a[n - 1] + b[n - 1];
}

// stream_triad: a[i] = b[i] + scalar * c[i], as one fused multiply-add (the
// CPU reference uses math.FMA, so the two agree to the last bit).
extern "C" __global__ void stream_triad(double *__restrict__ a, const double *__restrict__ b,
                                        const double *__restrict__ c, double scalar, long long n)
{
    double2 *a2 = (double2 *)a;
    const double2 *b2 = (const double2 *)b;
    const double2 *c2 = (const double2 *)c;
    GRID_STRIDE(i, n / 2)
    {
        double2 y = b2[i], z = c2[i];
        a2[i] = make_double2(__fma_rn(scalar, z.x, y.x), __fma_rn(scalar, z.y, y.y));
    }
    if ((n & 1) && TAIL_THREAD)
        a[n - 1] = __fma_rn(scalar, c[n - 1], b[n - 1]);
}

// blockSum reduces v over the block (blockDim.x a multiple of 32, at most
// 1024) and returns the total in thread 0.
__device__ double blockSum(double v)
{
    __shared__ double warpSums[32];
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warpSums[warp] = v;
    __syncthreads();
    v = 0;
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? warpSums[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
    }
    __syncthreads();
    return v;
}

// stream_dot: partial[blockIdx.x] = this block's share of sum(a[i] * b[i]);
// the host adds the gridDim.x partial sums.
extern "C" __global__ void stream_dot(const double *__restrict__ a, const double *__restrict__ b,
                                      double *__restrict__ partial, long long n)
{
    const double2 *a2 = (const double2 *)a;
    const double2 *b2 = (const double2 *)b;
    double s = 0;
    GRID_STRIDE(i, n / 2)
    {
        double2 x = a2[i], y = b2[i];
        s = __fma_rn(x.x, y.x, s);
        s = __fma_rn(x.y, y.y, s);
    }
    if ((n & 1) && TAIL_THREAD)
        s = __fma_rn(a[n - 1], b[n - 1], s);
    s = blockSum(s);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = s;
}

// blockMax is blockSum's maximum.
__device__ double blockMax(double v)
{
    __shared__ double warpMax[32];
    for (int off = 16; off > 0; off >>= 1)
        v = fmax(v, __shfl_down_sync(0xffffffffu, v, off));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warpMax[warp] = v;
    __syncthreads();
    v = 0;
    if (warp == 0) {
        v = lane < (blockDim.x >> 5) ? warpMax[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1)
            v = fmax(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    __syncthreads();
    return v;
}

// stream_check is BabelStream's verification done where the data lives, so
// an iteration never copies the arrays back: for each of a, b and c it
// accumulates the sum and the maximum of |x[i] - gold|, and it counts the
// elements that are not finite, into partial[7*blockIdx.x ...] as
// (sum a, sum b, sum c, max a, max b, max c, non-finite).
extern "C" __global__ void stream_check(const double *__restrict__ a,
                                        const double *__restrict__ b,
                                        const double *__restrict__ c, long long n, double ga,
                                        double gb, double gc, double *__restrict__ partial)
{
    double ea = 0, eb = 0, ec = 0, ma = 0, mb = 0, mc = 0, bad = 0;
    GRID_STRIDE(i, n)
    {
        double x = a[i], y = b[i], z = c[i];
        if (!isfinite(x) || !isfinite(y) || !isfinite(z))
            bad += 1;
        double dx = fabs(x - ga), dy = fabs(y - gb), dz = fabs(z - gc);
        ea += dx;
        eb += dy;
        ec += dz;
        ma = fmax(ma, dx);
        mb = fmax(mb, dy);
        mc = fmax(mc, dz);
    }
    double out[7] = {blockSum(ea), blockSum(eb), blockSum(ec), blockMax(ma),
                     blockMax(mb), blockMax(mc), blockSum(bad)};
    if (threadIdx.x == 0)
        for (int k = 0; k < 7; k++)
            partial[7 * blockIdx.x + k] = out[k];
}
