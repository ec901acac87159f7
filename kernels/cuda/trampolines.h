// Trampolines into the CUDA driver API for cgo: each calls a driver entry
// point, obtained with dlsym, through a pointer of its C type. The few types
// are declared here so that no CUDA header is needed at build time.
#ifndef HEATSINK_CUDA_TRAMPOLINES_H
#define HEATSINK_CUDA_TRAMPOLINES_H
#include <stdlib.h>
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;

static inline CUresult hs_u(void *f, unsigned a) { return ((CUresult(*)(unsigned))f)(a); }
static inline CUresult hs_pint(void *f, int *a) { return ((CUresult(*)(int *))f)(a); }
static inline CUresult hs_void(void *f) { return ((CUresult(*)(void))f)(); }
static inline CUresult hs_ptr(void *f, void *p) { return ((CUresult(*)(void *))f)(p); }
static inline CUresult hs_dev(void *f, CUdevice d) { return ((CUresult(*)(CUdevice))f)(d); }
static inline CUresult hs_devFlags(void *f, CUdevice d, unsigned fl) { return ((CUresult(*)(CUdevice, unsigned))f)(d, fl); }
static inline CUresult hs_deviceGet(void *f, CUdevice *d, int ord) { return ((CUresult(*)(CUdevice *, int))f)(d, ord); }
static inline CUresult hs_deviceGetName(void *f, char *s, int n, CUdevice d) { return ((CUresult(*)(char *, int, CUdevice))f)(s, n, d); }
static inline CUresult hs_deviceGetAttribute(void *f, int *v, int a, CUdevice d) { return ((CUresult(*)(int *, int, CUdevice))f)(v, a, d); }
static inline CUresult hs_deviceTotalMem(void *f, size_t *b, CUdevice d) { return ((CUresult(*)(size_t *, CUdevice))f)(b, d); }
static inline CUresult hs_deviceGetUuid(void *f, unsigned char *u, CUdevice d) { return ((CUresult(*)(unsigned char *, CUdevice))f)(u, d); }
static inline CUresult hs_primaryCtxRetain(void *f, CUcontext *c, CUdevice d) { return ((CUresult(*)(CUcontext *, CUdevice))f)(c, d); }
static inline CUresult hs_moduleLoadDataEx(void *f, CUmodule *m, const void *img, unsigned n, int *opts, void **vals) {
	return ((CUresult(*)(CUmodule *, const void *, unsigned, int *, void **))f)(m, img, n, opts, vals);
}
static inline CUresult hs_moduleGetFunction(void *f, CUfunction *fn, CUmodule m, const char *name) {
	return ((CUresult(*)(CUfunction *, CUmodule, const char *))f)(fn, m, name);
}
static inline CUresult hs_moduleGetGlobal(void *f, CUdeviceptr *p, size_t *n, CUmodule m, const char *name) {
	return ((CUresult(*)(CUdeviceptr *, size_t *, CUmodule, const char *))f)(p, n, m, name);
}
static inline CUresult hs_funcSetAttribute(void *f, CUfunction fn, int a, int v) { return ((CUresult(*)(CUfunction, int, int))f)(fn, a, v); }
static inline CUresult hs_funcGetAttribute(void *f, int *v, int a, CUfunction fn) { return ((CUresult(*)(int *, int, CUfunction))f)(v, a, fn); }
static inline CUresult hs_launch(void *f, CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned smem, CUstream s, void **params) {
	return ((CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
	                     void **, void **))f)(fn, gx, gy, gz, bx, by, bz, smem, s, params, NULL);
}
static inline CUresult hs_memAlloc(void *f, CUdeviceptr *p, size_t n) { return ((CUresult(*)(CUdeviceptr *, size_t))f)(p, n); }
static inline CUresult hs_memFree(void *f, CUdeviceptr p) { return ((CUresult(*)(CUdeviceptr))f)(p); }
static inline CUresult hs_htod(void *f, CUdeviceptr d, const void *s, size_t n) { return ((CUresult(*)(CUdeviceptr, const void *, size_t))f)(d, s, n); }
static inline CUresult hs_dtoh(void *f, void *d, CUdeviceptr s, size_t n) { return ((CUresult(*)(void *, CUdeviceptr, size_t))f)(d, s, n); }
static inline CUresult hs_peer(void *f, CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n) {
    return ((CUresult(*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t))f)(d, dc, s, sc, n);
}
static inline CUresult hs_peerAsync(void *f, CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st) {
    return ((CUresult(*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream))f)(d, dc, s, sc, n, st);
}
static inline CUresult hs_canAccessPeer(void *f, int *can, CUdevice d, CUdevice p) { return ((CUresult(*)(int *, CUdevice, CUdevice))f)(can, d, p); }
static inline CUresult hs_enablePeer(void *f, CUcontext p, unsigned fl) { return ((CUresult(*)(CUcontext, unsigned))f)(p, fl); }
static inline CUresult hs_dtod(void *f, CUdeviceptr d, CUdeviceptr s, size_t n) { return ((CUresult(*)(CUdeviceptr, CUdeviceptr, size_t))f)(d, s, n); }
static inline CUresult hs_memsetD8(void *f, CUdeviceptr d, unsigned char v, size_t n) { return ((CUresult(*)(CUdeviceptr, unsigned char, size_t))f)(d, v, n); }
static inline CUresult hs_memGetInfo(void *f, size_t *fr, size_t *t) { return ((CUresult(*)(size_t *, size_t *))f)(fr, t); }
static inline CUresult hs_eventCreate(void *f, CUevent *e, unsigned fl) { return ((CUresult(*)(CUevent *, unsigned))f)(e, fl); }
static inline CUresult hs_eventRecord(void *f, CUevent e, CUstream s) { return ((CUresult(*)(CUevent, CUstream))f)(e, s); }
static inline CUresult hs_eventElapsed(void *f, float *ms, CUevent a, CUevent b) { return ((CUresult(*)(float *, CUevent, CUevent))f)(ms, a, b); }
static inline CUresult hs_streamCreate(void *f, CUstream *s, unsigned fl) { return ((CUresult(*)(CUstream *, unsigned))f)(s, fl); }
static inline CUresult hs_streamWaitEvent(void *f, CUstream s, CUevent e, unsigned fl) { return ((CUresult(*)(CUstream, CUevent, unsigned))f)(s, e, fl); }
static inline CUresult hs_memAllocHost(void *f, void **p, size_t n) { return ((CUresult(*)(void **, size_t))f)(p, n); }
static inline CUresult hs_htodAsync(void *f, CUdeviceptr d, const void *s, size_t n, CUstream st) {
	return ((CUresult(*)(CUdeviceptr, const void *, size_t, CUstream))f)(d, s, n, st);
}
static inline CUresult hs_errorText(void *f, CUresult r, const char **s) { return ((CUresult(*)(CUresult, const char **))f)(r, s); }

// hs_jitLogOptions fills cuModuleLoadDataEx's option arrays to capture the
// JIT compiler's error log in log (n bytes); the size travels as a pointer.
static inline void hs_jitLogOptions(int *opts, void **vals, void *log, size_t n) {
	opts[0] = 5; // CU_JIT_ERROR_LOG_BUFFER
	vals[0] = log;
	opts[1] = 6; // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
	vals[1] = (void *)n;
}
#endif
