// Package dl opens shared libraries at run time (dlopen/dlsym), so that the
// CUDA driver and cuBLAS are needed only on machines that run GPU work and
// never at build time.
package dl

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

// hs_dlopen opens name and, on failure, returns dlerror's text in *err
// (dlerror is per thread, so it is read in the same C call).
static void *hs_dlopen(const char *name, const char **err) {
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) *err = dlerror();
	return h;
}

static void *hs_dlsym(void *h, const char *name, const char **err) {
	dlerror();
	void *p = dlsym(h, name);
	if (p == NULL) *err = dlerror();
	return p;
}

static const char *hs_dladdr(void *p) {
	Dl_info info;
	if (dladdr(p, &info) == 0) return NULL;
	return info.dli_fname;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Library is an open shared library. It is never closed: the CUDA driver and
// cuBLAS keep process-wide state that must outlive any one user.
type Library struct {
	name string
	h    unsafe.Pointer
}

// Open opens the library name (a soname such as "libcuda.so.1", searched the
// way the dynamic linker searches, or a path).
func Open(name string) (*Library, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cerr *C.char
	h := C.hs_dlopen(cname, &cerr)
	if h == nil {
		msg := "dlopen failed"
		if cerr != nil {
			msg = C.GoString(cerr)
		}
		return nil, errors.New(msg)
	}
	return &Library{name: name, h: h}, nil
}

// Name is the name the library was opened by.
func (l *Library) Name() string { return l.name }

// Sym returns the address of the function or variable called name.
func (l *Library) Sym(name string) (unsafe.Pointer, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cerr *C.char
	p := C.hs_dlsym(l.h, cname, &cerr)
	if p == nil {
		msg := "not found"
		if cerr != nil {
			msg = C.GoString(cerr)
		}
		return nil, fmt.Errorf("symbol %s: %s", name, msg)
	}
	return p, nil
}

// Path returns the file the symbol at p was loaded from, or "" if unknown;
// it tells the user which of several installed copies is in use.
func Path(p unsafe.Pointer) string {
	s := C.hs_dladdr(p)
	if s == nil {
		return ""
	}
	return C.GoString(s)
}
