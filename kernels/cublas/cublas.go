// Package cublas calls cuBLAS, opened at run time with dlopen like the CUDA
// driver, when a CUDA 12 or 13 installation provides it. Without one, Open
// returns ErrNoLibrary and callers fall back to their own kernels.
package cublas

/*
#include "trampolines.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/internal/dl"
)

// ErrNoLibrary means no usable libcublas could be opened.
var ErrNoLibrary = errors.New("no cuBLAS library")

// Sonames are the cuBLAS versions tried, newest first.
var Sonames = []string{"libcublas.so.13", "libcublas.so.12"}

// Library is an open cuBLAS.
type Library struct {
	path                                                                      string
	create, destroy, getVersion, getProperty, dgemm, statusName, statusString unsafe.Pointer
}

// Candidates lists where Open looks: each soname as the dynamic linker finds
// it (LD_LIBRARY_PATH, ld.so.cache), then under $CUDA_HOME, $CUDA_PATH and
// /usr/local/cuda, where toolkits install it without registering it.
func Candidates() []string {
	var out []string
	out = append(out, Sonames...)
	var roots []string
	for _, env := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(env); v != "" {
			roots = append(roots, v)
		}
	}
	roots = append(roots, "/usr/local/cuda")
	for _, r := range roots {
		for _, s := range Sonames {
			out = append(out, filepath.Join(r, "lib64", s), filepath.Join(r, "targets", "x86_64-linux", "lib", s))
		}
	}
	return out
}

// Open opens the first usable cuBLAS among Candidates.
func Open() (*Library, error) {
	var why []string
	for _, name := range Candidates() {
		if strings.Contains(name, "/") {
			if _, err := os.Stat(name); err != nil {
				continue
			}
		}
		l, err := OpenPath(name)
		if err == nil {
			return l, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		why = append(why, "none of "+strings.Join(Sonames, ", ")+" found")
	}
	return nil, fmt.Errorf("%w: %s", ErrNoLibrary, strings.Join(why, "; "))
}

// OpenPath opens cuBLAS from one soname or path.
func OpenPath(name string) (*Library, error) {
	lib, err := dl.Open(name)
	if err != nil {
		return nil, err
	}
	l := &Library{}
	for _, s := range []struct {
		p    *unsafe.Pointer
		name string
	}{
		{&l.create, "cublasCreate_v2"},
		{&l.destroy, "cublasDestroy_v2"},
		{&l.getVersion, "cublasGetVersion_v2"},
		{&l.getProperty, "cublasGetProperty"},
		{&l.dgemm, "cublasDgemm_v2"},
	} {
		if *s.p, err = lib.Sym(s.name); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	// The status texts exist from CUDA 11.4 on; older errors show the code.
	l.statusName, _ = lib.Sym("cublasGetStatusName")
	l.statusString, _ = lib.Sym("cublasGetStatusString")
	l.path = dl.Path(l.create)
	if l.path == "" {
		l.path = name
	}
	return l, nil
}

// Path is the file cuBLAS was loaded from.
func (l *Library) Path() string { return l.path }

// Version is the library's version as major*10000 + minor*100 + patch,
// read without a GPU (cublasGetProperty).
func (l *Library) Version() (int, error) {
	v := 0
	for i, scale := range []int{10000, 100, 1} { // MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
		var x C.int
		if err := l.check("cublasGetProperty", C.hs_getProperty(l.getProperty, C.int(i), &x)); err != nil {
			return 0, err
		}
		v += int(x) * scale
	}
	return v, nil
}

// Error is a failed cuBLAS call.
type Error struct {
	Op     string
	Status int
	Name   string // "CUBLAS_STATUS_INVALID_VALUE"
	Text   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Op, e.Text, e.Name)
}

func (l *Library) check(op string, s C.cublasStatus_t) error {
	if s == 0 {
		return nil
	}
	e := &Error{Op: op, Status: int(s), Name: fmt.Sprintf("cublasStatus %d", int(s)), Text: "cuBLAS error"}
	if l.statusName != nil {
		if p := C.hs_statusText(l.statusName, s); p != nil {
			e.Name = C.GoString(p)
		}
	}
	if l.statusString != nil {
		if p := C.hs_statusText(l.statusString, s); p != nil {
			e.Text = C.GoString(p)
		}
	}
	return e
}

// Handle is a cuBLAS handle bound to one GPU's context.
type Handle struct {
	lib *Library
	ctx *cuda.Context
	h   C.cublasHandle_t
}

// NewHandle creates a handle on ctx's GPU.
func (l *Library) NewHandle(ctx *cuda.Context) (*Handle, error) {
	h := &Handle{lib: l, ctx: ctx}
	err := ctx.Do(func() error { return l.check("cublasCreate", C.hs_create(l.create, &h.h)) })
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Version is cuBLAS's version as major*10000 + minor*100 + patch.
func (h *Handle) Version() (int, error) {
	var v C.int
	err := h.ctx.Do(func() error { return h.lib.check("cublasGetVersion", C.hs_getVersion(h.lib.getVersion, h.h, &v)) })
	return int(v), err
}

// VersionString formats a Version as "13.0.2".
func VersionString(v int) string { return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100) }

// Dgemm queues C = alpha*A*B + beta*C for column-major, untransposed A (m x
// k), B (k x n) and C (m x n) with the given leading dimensions.
func (h *Handle) Dgemm(m, n, k int, alpha float64, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, beta float64, c cuda.DevicePtr, ldc int) error {
	// alpha and beta are read before cublasDgemm returns (host pointer mode).
	return h.ctx.Do(func() error {
		return h.lib.check("cublasDgemm", C.hs_dgemm(h.lib.dgemm, h.h, 0, 0, C.int(m), C.int(n), C.int(k),
			(*C.double)(unsafe.Pointer(&alpha)), C.ulonglong(a), C.int(lda), C.ulonglong(b), C.int(ldb),
			(*C.double)(unsafe.Pointer(&beta)), C.ulonglong(c), C.int(ldc)))
	})
}

// Destroy frees the handle; it is idempotent and safe on nil.
func (h *Handle) Destroy() error {
	if h == nil || h.h == nil {
		return nil
	}
	err := h.ctx.Do(func() error { return h.lib.check("cublasDestroy", C.hs_destroy(h.lib.destroy, h.h)) })
	h.h = nil
	return err
}
