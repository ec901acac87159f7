// Trampolines into cuBLAS for cgo, with the few types declared here so that
// no CUDA header is needed at build time.
#ifndef HEATSINK_CUBLAS_TRAMPOLINES_H
#define HEATSINK_CUBLAS_TRAMPOLINES_H
#include <stddef.h>

typedef int cublasStatus_t;
typedef void *cublasHandle_t;

static inline cublasStatus_t hs_create(void *f, cublasHandle_t *h) { return ((cublasStatus_t(*)(cublasHandle_t *))f)(h); }
static inline cublasStatus_t hs_destroy(void *f, cublasHandle_t h) { return ((cublasStatus_t(*)(cublasHandle_t))f)(h); }
static inline cublasStatus_t hs_getVersion(void *f, cublasHandle_t h, int *v) { return ((cublasStatus_t(*)(cublasHandle_t, int *))f)(h, v); }
static inline const char *hs_statusText(void *f, cublasStatus_t s) { return ((const char *(*)(cublasStatus_t))f)(s); }
static inline cublasStatus_t hs_dgemm(void *f, cublasHandle_t h, int ta, int tb, int m, int n, int k, const double *alpha,
                                      unsigned long long a, int lda, unsigned long long b, int ldb, const double *beta,
                                      unsigned long long c, int ldc) {
	return ((cublasStatus_t(*)(cublasHandle_t, int, int, int, int, int, const double *, const double *, int,
	                           const double *, int, const double *, double *, int))f)(
	    h, ta, tb, m, n, k, alpha, (const double *)a, lda, (const double *)b, ldb, beta, (double *)c, ldc);
}
static inline cublasStatus_t hs_getProperty(void *f, int type, int *v) { return ((cublasStatus_t(*)(int, int *))f)(type, v); }
#endif
