//go:build riemu

// Package riemu runs ri.cu on the CPU: the CUDA source compiled as C++
// against a shim of the built-ins it uses (shim.h), every block's threads
// as real threads where a kernel synchronises. It lets the ri package's GPU
// tests exercise the kernels and their host code on a machine with no GPU
// (go test -tags riemu ./kernels/ri): slow, and blind to what only a GPU
// shows (memory races between blocks, timing), which compute-sanitizer
// and the device tests cover.
package riemu

/*
#cgo CXXFLAGS: -std=c++20 -O2 -pthread -Wno-unused-function
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include <string.h>

#define GRID unsigned gx, unsigned gy, unsigned bx, unsigned long sh
int emu_ri_threads(void);
int emu_ri_chunk(void);
int emu_ri_hot_list(void);
int emu_ri_hot_batch(void);
void emu_ri_index_vectors(GRID, const unsigned char *bytes, const int *offsets, int n, int docs,
                          unsigned long long seed, int k, int d, int *out);
void emu_ri_tv_block(GRID, const int *units, const int *list, const int *tok, const int *idx, int k,
                     int d, int w, int permute, int window, int *rows);
void emu_ri_tv_warp(GRID, const int *units, const int *list, const int *tok, const int *idx, int k,
                    int d, int w, int permute, int window, int *rows);
void emu_ri_tv_thread(GRID, const int *units, int nunits, const int *list, const int *tok,
                      const int *idx, int k, int d, int w, int permute, int window, int *rows);
void emu_ri_combine_i32(GRID, const int *comb, int d, int *rows);
void emu_ri_combine_f32(GRID, const int *comb, int d, float *rows);
void emu_ri_retrain_window(GRID, const int *units, const int *occ, const int *tok, const float *seeds,
                           int d, int w, int permute, float *rows);
void emu_ri_retrain_hot(GRID, const int *units, int nunits, const int *occ, const int *tok,
                        const float *seeds, int d, int w, int hot, int stagger, int *queue, float *rows);
void emu_ri_retrain_hot64(GRID, const int *units, int nunits, const int *occ, const int *tok,
                          const float *seeds, int d, int w, int hot, int stagger, int *queue, float *rows);
void emu_ri_gather(GRID, const int *units, const int *list, const float *src, int d, float *rows);
void emu_ri_normalise_i32(GRID, const int *x, int d, float *out);
void emu_ri_normalise_f32(GRID, const float *x, int d, float *out);
void emu_ri_row_sums(GRID, const int *x, int d, long long *out);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/internal/emu"
)

// Device is the emulated GPU: the shared base, with this module's
// constants and kernels.
type Device struct{ emu.Device }

// The engines take the emulator where they take a GPU.
var _ kernels.Device = (*Device)(nil)

// Open returns an emulated GPU. Fresh memory is zeros.
func Open() *Device { return &Device{emu.NewDevice("ri.cu on the CPU (riemu)", 1, 0)} }

// GlobalInt32 reads a module constant.
func (d *Device) GlobalInt32(name string) (int32, error) {
	switch name {
	case "ri_threads":
		return int32(C.emu_ri_threads()), nil
	case "ri_chunk":
		return int32(C.emu_ri_chunk()), nil
	case "ri_hot_list":
		return int32(C.emu_ri_hot_list()), nil
	case "ri_hot_batch":
		return int32(C.emu_ri_hot_batch()), nil
	}
	return 0, fmt.Errorf("module ri: no global %s", name)
}

// args checks launch arguments against a kernel's parameter types as the
// driver would need them, and converts them.
type args struct {
	kernel string
	a      []any
	err    error
}

func (a *args) at(i int) any {
	if i >= len(a.a) {
		if a.err == nil {
			a.err = fmt.Errorf("kernel %s: %d arguments, parameter %d missing", a.kernel, len(a.a), i)
		}
		return nil
	}
	return a.a[i]
}

func (a *args) ptr(i int) unsafe.Pointer {
	b, ok := a.at(i).(*emu.Buffer)
	if !ok || b.Ptr() == nil {
		if a.err == nil {
			a.err = fmt.Errorf("kernel %s: argument %d is %T, want a live buffer", a.kernel, i, a.at(i))
		}
		return nil
	}
	return b.Ptr()
}

func (a *args) i32(i int) C.int {
	v, ok := a.at(i).(int32)
	if !ok && a.err == nil {
		a.err = fmt.Errorf("kernel %s: argument %d is %T, want int32", a.kernel, i, a.at(i))
	}
	return C.int(v)
}

func (a *args) u64(i int) C.ulonglong {
	v, ok := a.at(i).(uint64)
	if !ok && a.err == nil {
		a.err = fmt.Errorf("kernel %s: argument %d is %T, want uint64", a.kernel, i, a.at(i))
	}
	return C.ulonglong(v)
}

// Launch runs a kernel of ri.cu to completion. Arguments must have the
// kernel's parameter types exactly (buffers as *emu.Buffer), as on the GPU.
func (d *Device) Launch(kernel string, grid, block cuda.Dim3, shared int, argv ...any) error {
	if grid.Z > 1 || block.Y > 1 || block.Z > 1 || block.X == 0 || block.X > 1024 || grid.X == 0 || grid.Y == 0 {
		return fmt.Errorf("launch %s grid %v block %v: shape unsupported or invalid", kernel, grid, block)
	}
	if err := emu.CheckShared(kernel, shared); err != nil {
		return err
	}
	a := &args{kernel: kernel, a: argv}
	gx, gy, bx, sh := C.uint(grid.X), C.uint(grid.Y), C.uint(block.X), C.ulong(shared)
	nargs := map[string]int{
		"ri_index_vectors": 8, "ri_tv_block": 10, "ri_tv_warp": 10, "ri_tv_thread": 11, "ri_combine_i32": 3, "ri_combine_f32": 3,
		"ri_retrain_window": 8, "ri_gather": 5,
		"ri_retrain_hot": 11, "ri_retrain_hot64": 11, "ri_normalise_i32": 3, "ri_normalise_f32": 3, "ri_row_sums": 3,
	}
	n, ok := nargs[kernel]
	if !ok {
		return fmt.Errorf("module ri: no kernel %s", kernel)
	}
	if len(argv) != n {
		return fmt.Errorf("kernel %s: %d arguments, want %d", kernel, len(argv), n)
	}
	var call func()
	switch kernel {
	case "ri_index_vectors":
		bytes, offsets, nn, docs, seed, k, dd, out := a.ptr(0), a.ptr(1), a.i32(2), a.i32(3), a.u64(4), a.i32(5), a.i32(6), a.ptr(7)
		call = func() {
			C.emu_ri_index_vectors(gx, gy, bx, sh, (*C.uchar)(bytes), (*C.int)(offsets), nn, docs, seed, k, dd, (*C.int)(out))
		}
	case "ri_tv_block":
		units, list, tok, idx, k, dd, w, perm, win, rows := a.ptr(0), a.ptr(1), a.ptr(2), a.ptr(3), a.i32(4), a.i32(5), a.i32(6), a.i32(7), a.i32(8), a.ptr(9)
		call = func() {
			C.emu_ri_tv_block(gx, gy, bx, sh, (*C.int)(units), (*C.int)(list), (*C.int)(tok), (*C.int)(idx), k, dd, w, perm, win, (*C.int)(rows))
		}
	case "ri_tv_warp":
		units, list, tok, idx, k, dd, w, perm, win, rows := a.ptr(0), a.ptr(1), a.ptr(2), a.ptr(3), a.i32(4), a.i32(5), a.i32(6), a.i32(7), a.i32(8), a.ptr(9)
		call = func() {
			C.emu_ri_tv_warp(gx, gy, bx, sh, (*C.int)(units), (*C.int)(list), (*C.int)(tok), (*C.int)(idx), k, dd, w, perm, win, (*C.int)(rows))
		}
	case "ri_tv_thread":
		units, nu, list, tok, idx, k, dd, w, perm, win, rows := a.ptr(0), a.i32(1), a.ptr(2), a.ptr(3), a.ptr(4), a.i32(5), a.i32(6), a.i32(7), a.i32(8), a.i32(9), a.ptr(10)
		call = func() {
			C.emu_ri_tv_thread(gx, gy, bx, sh, (*C.int)(units), nu, (*C.int)(list), (*C.int)(tok), (*C.int)(idx), k, dd, w, perm, win, (*C.int)(rows))
		}
	case "ri_combine_i32":
		comb, dd, rows := a.ptr(0), a.i32(1), a.ptr(2)
		call = func() { C.emu_ri_combine_i32(gx, gy, bx, sh, (*C.int)(comb), dd, (*C.int)(rows)) }
	case "ri_combine_f32":
		comb, dd, rows := a.ptr(0), a.i32(1), a.ptr(2)
		call = func() { C.emu_ri_combine_f32(gx, gy, bx, sh, (*C.int)(comb), dd, (*C.float)(rows)) }
	case "ri_retrain_window":
		units, occ, tok, seeds, dd, w, perm, rows := a.ptr(0), a.ptr(1), a.ptr(2), a.ptr(3), a.i32(4), a.i32(5), a.i32(6), a.ptr(7)
		call = func() {
			C.emu_ri_retrain_window(gx, gy, bx, sh, (*C.int)(units), (*C.int)(occ), (*C.int)(tok), (*C.float)(seeds), dd, w, perm, (*C.float)(rows))
		}
	case "ri_retrain_hot", "ri_retrain_hot64":
		units, nu, occ, tok, seeds, dd, w, hot, stagger, queue, rows := a.ptr(0), a.i32(1), a.ptr(2), a.ptr(3), a.ptr(4), a.i32(5), a.i32(6), a.i32(7), a.i32(8), a.ptr(9), a.ptr(10)
		call = func() {
			if kernel == "ri_retrain_hot64" {
				C.emu_ri_retrain_hot64(gx, gy, bx, sh, (*C.int)(units), nu, (*C.int)(occ), (*C.int)(tok), (*C.float)(seeds), dd, w, hot, stagger, (*C.int)(queue), (*C.float)(rows))
				return
			}
			C.emu_ri_retrain_hot(gx, gy, bx, sh, (*C.int)(units), nu, (*C.int)(occ), (*C.int)(tok), (*C.float)(seeds), dd, w, hot, stagger, (*C.int)(queue), (*C.float)(rows))
		}
	case "ri_gather":
		units, list, src, dd, rows := a.ptr(0), a.ptr(1), a.ptr(2), a.i32(3), a.ptr(4)
		call = func() {
			C.emu_ri_gather(gx, gy, bx, sh, (*C.int)(units), (*C.int)(list), (*C.float)(src), dd, (*C.float)(rows))
		}
	case "ri_normalise_i32":
		x, dd, out := a.ptr(0), a.i32(1), a.ptr(2)
		call = func() { C.emu_ri_normalise_i32(gx, gy, bx, sh, (*C.int)(x), dd, (*C.float)(out)) }
	case "ri_normalise_f32":
		x, dd, out := a.ptr(0), a.i32(1), a.ptr(2)
		call = func() { C.emu_ri_normalise_f32(gx, gy, bx, sh, (*C.float)(x), dd, (*C.float)(out)) }
	case "ri_row_sums":
		x, dd, out := a.ptr(0), a.i32(1), a.ptr(2)
		call = func() { C.emu_ri_row_sums(gx, gy, bx, sh, (*C.int)(x), dd, (*C.longlong)(out)) }
	}
	if a.err != nil {
		return a.err
	}
	call()
	return nil
}
