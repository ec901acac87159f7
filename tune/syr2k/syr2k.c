/* A Polybench-style syr2k (C := alpha*A*B^T + alpha*B*A^T + beta*C on the
 * lower triangle), the CPU validation target of heatsink tune.
 *
 * Tuning space (the dissertation's Syr2k space, Table 5.4):
 *   tile sizes   Polly's tiling of the loop band, set when compiling:
 *                clang-14 -O3 -mllvm -polly -mllvm -polly-tile-sizes=TI,TJ,TK
 *                (upstream clang-14 has no per-loop `#pragma clang loop id/tile`;
 *                only the SOLLVE fork the dissertation used carried them, so
 *                the sizes go in as Polly's option and apply to the whole file)
 *   interchange  j outside k (loop order i,j,k) instead of Polybench's i,k,j
 *   pack A/B     copy A / B transposed into a contiguous buffer inside the
 *                timed region, so the inner j loop of i,k,j reads unit stride
 * All 8 interchange/packing variants are compiled into one binary, so one
 * compile per tile-size triple serves 8 configurations.
 *
 * Usage: syr2k VARIANT N M [N M]...   VARIANT = interchange*4 + pack_a*2 + pack_b
 * prints one line per size: "variant=V n=N m=M time_s=T min_s=L checksum=X":
 * of SYR2K_RUNS runs on fresh data (default 3) the first is discarded (it
 * warms caches and pages: the dissertation's protocol within one process), T
 * is the mean of the rest and L their minimum (on a shared machine the
 * minimum is the figure least disturbed by other processes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define INTERCHANGE 0
#define PACK_A 0
#define PACK_B 0
#define KERNEL_NAME k000
#include "kernel.h"
#undef PACK_B
#undef KERNEL_NAME
#define PACK_B 1
#define KERNEL_NAME k001
#include "kernel.h"
#undef PACK_A
#undef PACK_B
#undef KERNEL_NAME
#define PACK_A 1
#define PACK_B 0
#define KERNEL_NAME k010
#include "kernel.h"
#undef PACK_B
#undef KERNEL_NAME
#define PACK_B 1
#define KERNEL_NAME k011
#include "kernel.h"
#undef INTERCHANGE
#undef PACK_A
#undef PACK_B
#undef KERNEL_NAME
#define INTERCHANGE 1
#define PACK_A 0
#define PACK_B 0
#define KERNEL_NAME k100
#include "kernel.h"
#undef PACK_B
#undef KERNEL_NAME
#define PACK_B 1
#define KERNEL_NAME k101
#include "kernel.h"
#undef PACK_A
#undef PACK_B
#undef KERNEL_NAME
#define PACK_A 1
#define PACK_B 0
#define KERNEL_NAME k110
#include "kernel.h"
#undef PACK_B
#undef KERNEL_NAME
#define PACK_B 1
#define KERNEL_NAME k111
#include "kernel.h"

typedef void (*kernel_fn)(int, int, double, double, double *, double *, double *, double *, double *);
static const kernel_fn kernels[8] = {
	(kernel_fn)k000, (kernel_fn)k001, (kernel_fn)k010, (kernel_fn)k011,
	(kernel_fn)k100, (kernel_fn)k101, (kernel_fn)k110, (kernel_fn)k111,
};

static void init(int n, int m, double *C, double *A, double *B) {
	for (int i = 0; i < n; i++)
		for (int j = 0; j < m; j++) {
			A[i * m + j] = (double)((i * j + 1) % n) / n;
			B[i * m + j] = (double)((i * j + 2) % m) / m;
		}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			C[i * n + j] = (double)((i * j + 3) % n) / m;
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	if (argc < 4 || argc % 2 != 0) {
		fprintf(stderr, "usage: %s VARIANT N M [N M]...\n", argv[0]);
		return 2;
	}
	int v = atoi(argv[1]);
	if (v < 0 || v > 7) {
		fprintf(stderr, "syr2k: VARIANT must be 0..7, got %s\n", argv[1]);
		return 2;
	}
	int runs = 3;
	const char *env = getenv("SYR2K_RUNS");
	if (env && (runs = atoi(env)) < 2) {
		fprintf(stderr, "syr2k: SYR2K_RUNS must be at least 2, got %s\n", env);
		return 2;
	}
	for (int a = 2; a < argc; a += 2) {
		int n = atoi(argv[a]), m = atoi(argv[a + 1]);
		if (n <= 0 || m <= 0) {
			fprintf(stderr, "syr2k: N and M must be positive, got %s %s\n", argv[a], argv[a + 1]);
			return 2;
		}
		double *C = malloc(sizeof(double) * n * n);
		double *A = malloc(sizeof(double) * n * m);
		double *B = malloc(sizeof(double) * n * m);
		double *PA = malloc(sizeof(double) * n * m);
		double *PB = malloc(sizeof(double) * n * m);
		if (!C || !A || !B || !PA || !PB) {
			fprintf(stderr, "syr2k: out of memory for n=%d m=%d\n", n, m);
			return 1;
		}
		double total = 0, best = 0, sum = 0;
		for (int r = 0; r < runs; r++) {
			init(n, m, C, A, B);
			double t0 = now_s();
			kernels[v](n, m, 1.5, 1.2, C, A, B, PA, PB);
			double t = now_s() - t0;
			if (r > 0)
				total += t;
			if (r == 1 || (r > 1 && t < best))
				best = t;
		}
		for (int i = 0; i < n; i++)
			for (int j = 0; j <= i; j++)
				sum += C[i * n + j];
		printf("variant=%d n=%d m=%d time_s=%.9f min_s=%.9f checksum=%.6e\n", v, n, m,
		       total / (runs - 1), best, sum);
		free(C), free(A), free(B), free(PA), free(PB);
	}
	return 0;
}
