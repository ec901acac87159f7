package cuda

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestLoadLibraryMissingIsNoDriver(t *testing.T) {
	_, err := LoadLibrary("libcuda-heatsink-missing.so.1")
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("err = %v, want ErrNoDriver", err)
	}
	for _, want := range []string{"no CUDA driver", "libcuda-heatsink-missing.so.1", "cannot open shared object file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestLoadLibraryWithoutDriverSymbolsIsNoDriver(t *testing.T) {
	// libm is on every glibc system and exports no cu* function.
	_, err := LoadLibrary("libm.so.6")
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("err = %v, want ErrNoDriver", err)
	}
	for _, want := range []string{"libm.so.6 is not a usable CUDA driver", "cuInit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestLoadWithoutDriverSaysSo(t *testing.T) {
	d, err := Load()
	if err == nil {
		t.Skipf("a CUDA driver is installed (%s, CUDA %s)", d.Path(), d.VersionString())
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("err = %v, want ErrNoDriver", err)
	}
	if !strings.HasPrefix(err.Error(), "no CUDA driver: libcuda.so.1") {
		t.Errorf("error %q does not start with %q", err, "no CUDA driver: libcuda.so.1")
	}
}

func TestErrorNamesTheCallAndTheDriversWords(t *testing.T) {
	e := &Error{Op: "cuMemAlloc", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: "out of memory"}
	if got, want := e.Error(), "cuMemAlloc: out of memory (CUDA_ERROR_OUT_OF_MEMORY)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestPackParamsAlignsEachArgumentToItsSize(t *testing.T) {
	blob, offsets, err := packParams([]any{int32(-3), DevicePtr(0x1000), float32(1.5), float64(2.25), uint32(7), int64(-9), uint64(11)})
	if err != nil {
		t.Fatal(err)
	}
	wantOff := []int{0, 8, 16, 24, 32, 40, 48}
	for i, w := range wantOff {
		if offsets[i] != w {
			t.Errorf("offset[%d] = %d, want %d", i, offsets[i], w)
		}
	}
	if len(blob) != 56 {
		t.Fatalf("len(blob) = %d, want 56", len(blob))
	}
	le := binary.LittleEndian
	if v := int32(le.Uint32(blob[0:])); v != -3 {
		t.Errorf("int32 = %d", v)
	}
	if v := le.Uint64(blob[8:]); v != 0x1000 {
		t.Errorf("pointer = %#x", v)
	}
	if v := math.Float32frombits(le.Uint32(blob[16:])); v != 1.5 {
		t.Errorf("float32 = %v", v)
	}
	if v := math.Float64frombits(le.Uint64(blob[24:])); v != 2.25 {
		t.Errorf("float64 = %v", v)
	}
	if v := int64(le.Uint64(blob[40:])); v != -9 {
		t.Errorf("int64 = %d", v)
	}
}

func TestPackParamsRejectsAmbiguousAndFreedArguments(t *testing.T) {
	for name, args := range map[string][]any{
		"plain int":    {1},
		"Go pointer":   {new(float64)},
		"freed buffer": {&Buffer{}},
		"nil buffer":   {(*Buffer)(nil)},
	} {
		if _, _, err := packParams(args); err == nil || !strings.Contains(err.Error(), "argument 0") {
			t.Errorf("%s: err = %v, want an error naming argument 0", name, err)
		}
	}
}

func TestNilAndFreedResourcesReleaseQuietly(t *testing.T) {
	// Cleanup paths call these unconditionally.
	var b *Buffer
	var e *Event
	var m *Module
	var h *HostBuffer
	var s *Stream
	if err := errors.Join(b.Free(), (&Buffer{}).Free(), e.Destroy(), (&Event{}).Destroy(), m.Unload(), (&Module{}).Unload(),
		h.Free(), (&HostBuffer{}).Free(), s.Destroy(), (&Stream{}).Destroy()); err != nil {
		t.Fatal(err)
	}
}

// An asynchronous copy outside either buffer, or from or to a freed one, is
// refused before it reaches the driver.
func TestCopyToAsyncChecksRanges(t *testing.T) {
	h, b := &HostBuffer{p: unsafe.Pointer(new([64]byte)), bytes: 64}, &Buffer{ptr: 1, bytes: 32}
	for _, c := range []struct{ dst, src, n int64 }{
		{0, 0, 33}, {1, 0, 32}, {0, 33, 32}, {-1, 0, 4}, {0, -4, 4}, {0, 0, -1},
	} {
		err := h.CopyToAsync(b, c.dst, c.src, c.n, nil)
		if err == nil || !strings.Contains(err.Error(), "asynchronous copy of") {
			t.Errorf("copy of %d bytes from %d to %d: error %v", c.n, c.src, c.dst, err)
		}
	}
	if err := (&HostBuffer{bytes: 64}).CopyToAsync(b, 0, 0, 4, nil); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("copy from a freed host buffer: error %v", err)
	}
}

// A peer copy outside either buffer is refused before it reaches the
// driver.
func TestCopyPeerChecksRanges(t *testing.T) {
	a, b := &Buffer{bytes: 64}, &Buffer{bytes: 32}
	for _, c := range []struct{ dstOff, srcOff, n int64 }{
		{0, 0, 33}, {1, 0, 32}, {0, 33, 32}, {-1, 0, 4}, {0, -4, 4}, {0, 0, -1},
	} {
		err := CopyPeer(b, c.dstOff, a, c.srcOff, c.n)
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("copy of %d bytes from %d to %d: error %v", c.n, c.srcOff, c.dstOff, err)
		}
	}
}
