//go:build w2vemu

// Package w2vemu runs w2v.cu on the CPU: the CUDA source compiled as C++
// against a shim of the built-ins it uses (shim.h), every thread of a block
// a real thread, a warp's shuffles exchanged at a barrier. It lets the w2v
// package's GPU tests run the kernels and their host code on a machine with
// no GPU (go test -tags w2vemu ./kernels/w2v): slowly, and blind to what
// only a GPU shows (timing, the memory model), which compute-sanitizer and
// the device tests cover.
package w2vemu

/*
#cgo CXXFLAGS: -std=c++20 -O2 -pthread -Wno-unused-function
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include <string.h>

#define GRID unsigned gx, unsigned bx, unsigned long sh
#define PARAMS float *syn0, float *syn1, const int *tok, const int *neg, const int *starts, const int *lens, \
	const float *alphas, const float *tab, int first, int nsent, int base, int d, int wf, int n, int fresh
#define DRAW_PARAMS const int *corpus, const int *starts, const unsigned long long *thr, const int *table, \
	int *tok, int *neg, int *lens, unsigned long long *kept, unsigned tableSize, int vocab, int eos, int n, \
	unsigned seed0, unsigned seed1, unsigned epoch, int first, int nsent, int base
int emu_w2v_warps(void);
int emu_w2v_exp_table(void);
int emu_w2v_neg_tries(void);
void emu_w2v_draw(GRID, DRAW_PARAMS);
void emu_w2v_sgns_warp1(GRID, PARAMS);
void emu_w2v_sgns_warp2(GRID, PARAMS);
void emu_w2v_sgns_warp4(GRID, PARAMS);
void emu_w2v_sgns_warp8(GRID, PARAMS);
void emu_w2v_sgns_block(GRID, PARAMS);
#define WOMBAT_PARAMS float *syn0, float *syn1, const int *items, const int *windows, const float *tab, int nitems, int d, int hs
int emu_wombat_tile_ints(void);
int emu_wombat_warps(void);
void emu_wombat_tiles(GRID, WOMBAT_PARAMS);
void emu_wombat_pairs(GRID, WOMBAT_PARAMS);
void emu_wombat_windows(GRID, WOMBAT_PARAMS);
void emu_wombat_negatives(GRID, int *windows, const int *starts, const int *table, int nwindows, unsigned tableSize,
	int vocab, int eos, int n, unsigned seed0, unsigned seed1, unsigned epoch, unsigned base0, unsigned base1);
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

// Open returns an emulated GPU. Fresh memory is 0xff bytes (NaN as
// float32), so a kernel reading what nobody wrote shows it.
func Open() *Device { return &Device{emu.NewDevice("w2v.cu on the CPU (w2vemu)", 1, 0xff)} }

// GlobalInt32 reads a module constant.
func (d *Device) GlobalInt32(name string) (int32, error) {
	switch name {
	case "w2v_warps":
		return int32(C.emu_w2v_warps()), nil
	case "w2v_exp_table":
		return int32(C.emu_w2v_exp_table()), nil
	case "w2v_neg_tries":
		return int32(C.emu_w2v_neg_tries()), nil
	case "wombat_tile_ints":
		return int32(C.emu_wombat_tile_ints()), nil
	case "wombat_warps":
		return int32(C.emu_wombat_warps()), nil
	}
	return 0, fmt.Errorf("module w2v: no global %s", name)
}

// Launch runs a kernel of w2v.cu to completion. Arguments must have the
// kernels' parameter types exactly (buffers as *emu.Buffer), as on the GPU.
func (d *Device) Launch(kernel string, grid, block cuda.Dim3, shared int, argv ...any) error {
	if grid.Y > 1 || grid.Z > 1 || block.Y > 1 || block.Z > 1 || block.X == 0 || block.X > 1024 || block.X%32 != 0 || grid.X == 0 {
		return fmt.Errorf("launch %s grid %v block %v: shape unsupported or invalid", kernel, grid, block)
	}
	if err := emu.CheckShared(kernel, shared); err != nil {
		return err
	}
	// The kernels take their buffers first, then 32-bit integers.
	nbuf, nint := 8, 7
	switch kernel {
	case "w2v_draw":
		nbuf, nint = 8, 10
	case "wombat_tiles", "wombat_pairs", "wombat_windows":
		nbuf, nint = 5, 3
	case "wombat_negatives":
		nbuf, nint = 3, 10
	}
	if len(argv) != nbuf+nint {
		return fmt.Errorf("kernel %s: %d arguments, want %d", kernel, len(argv), nbuf+nint)
	}
	var p [8]unsafe.Pointer
	for i := 0; i < nbuf; i++ {
		b, ok := argv[i].(*emu.Buffer)
		if !ok || b.Ptr() == nil {
			return fmt.Errorf("kernel %s: argument %d is %T, want a live buffer", kernel, i, argv[i])
		}
		p[i] = b.Ptr()
	}
	var v [10]C.int
	for i := 0; i < nint; i++ {
		x, ok := argv[nbuf+i].(int32)
		if !ok {
			return fmt.Errorf("kernel %s: argument %d is %T, want int32", kernel, nbuf+i, argv[nbuf+i])
		}
		v[i] = C.int(x)
	}
	gx, bx, sh := C.uint(grid.X), C.uint(block.X), C.ulong(shared)
	if kernel == "w2v_draw" {
		C.emu_w2v_draw(gx, bx, sh, (*C.int)(p[0]), (*C.int)(p[1]), (*C.ulonglong)(p[2]), (*C.int)(p[3]),
			(*C.int)(p[4]), (*C.int)(p[5]), (*C.int)(p[6]), (*C.ulonglong)(p[7]),
			C.uint(v[0]), v[1], v[2], v[3], C.uint(v[4]), C.uint(v[5]), C.uint(v[6]), v[7], v[8], v[9])
		return nil
	}
	if kernel == "wombat_negatives" {
		C.emu_wombat_negatives(gx, bx, sh, (*C.int)(p[0]), (*C.int)(p[1]), (*C.int)(p[2]), v[0], C.uint(v[1]), v[2], v[3], v[4],
			C.uint(v[5]), C.uint(v[6]), C.uint(v[7]), C.uint(v[8]), C.uint(v[9]))
		return nil
	}
	syn0, syn1 := (*C.float)(p[0]), (*C.float)(p[1])
	switch kernel {
	case "wombat_tiles":
		C.emu_wombat_tiles(gx, bx, sh, syn0, syn1, (*C.int)(p[2]), (*C.int)(p[3]), (*C.float)(p[4]), v[0], v[1], v[2])
		return nil
	case "wombat_pairs":
		C.emu_wombat_pairs(gx, bx, sh, syn0, syn1, (*C.int)(p[2]), (*C.int)(p[3]), (*C.float)(p[4]), v[0], v[1], v[2])
		return nil
	case "wombat_windows":
		C.emu_wombat_windows(gx, bx, sh, syn0, syn1, (*C.int)(p[2]), (*C.int)(p[3]), (*C.float)(p[4]), v[0], v[1], v[2])
		return nil
	}
	tok, neg, starts, lens := (*C.int)(p[2]), (*C.int)(p[3]), (*C.int)(p[4]), (*C.int)(p[5])
	alphas, tab := (*C.float)(p[6]), (*C.float)(p[7])
	switch kernel {
	case "w2v_sgns_warp1":
		C.emu_w2v_sgns_warp1(gx, bx, sh, syn0, syn1, tok, neg, starts, lens, alphas, tab, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
	case "w2v_sgns_warp2":
		C.emu_w2v_sgns_warp2(gx, bx, sh, syn0, syn1, tok, neg, starts, lens, alphas, tab, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
	case "w2v_sgns_warp4":
		C.emu_w2v_sgns_warp4(gx, bx, sh, syn0, syn1, tok, neg, starts, lens, alphas, tab, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
	case "w2v_sgns_warp8":
		C.emu_w2v_sgns_warp8(gx, bx, sh, syn0, syn1, tok, neg, starts, lens, alphas, tab, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
	case "w2v_sgns_block":
		C.emu_w2v_sgns_block(gx, bx, sh, syn0, syn1, tok, neg, starts, lens, alphas, tab, v[0], v[1], v[2], v[3], v[4], v[5], v[6])
	default:
		return fmt.Errorf("module w2v: no kernel %s", kernel)
	}
	return nil
}
