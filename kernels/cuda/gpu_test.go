package cuda

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// openGPU returns GPU 0's context, or skips the test with the reason there
// is none.
func openGPU(t *testing.T) *Context {
	t.Helper()
	d, err := Load()
	if err != nil {
		t.Skipf("skipping GPU test: %v", err)
	}
	c, err := d.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func TestGPUDevicesDescribeTheHardware(t *testing.T) {
	c := openGPU(t)
	d := c.Driver()
	devs, err := d.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range devs {
		t.Logf("GPU %d: %s, compute %s, %d SMs, %.1f GiB, L2 %d KiB, %s", info.Ordinal, info.Name,
			info.ComputeCapability(), info.SMs, float64(info.MemoryBytes)/(1<<30), info.L2Bytes>>10, info.UUID)
		if info.Name == "" || info.SMs <= 0 || info.MemoryBytes <= 0 || info.Major <= 0 || !strings.HasPrefix(info.UUID, "GPU-") {
			t.Errorf("implausible device info %+v", info)
		}
	}
	if _, err := d.Device(len(devs)); err == nil || !strings.Contains(err.Error(), "no GPU") {
		t.Errorf("Device(%d) err = %v, want no GPU", len(devs), err)
	}
	if _, err := d.Open(-1); err == nil {
		t.Error("Open(-1) succeeded")
	}
}

func TestGPUUploadDownloadRoundTripFromManyGoroutines(t *testing.T) {
	c := openGPU(t)
	// Goroutines move between OS threads and each call must still find the
	// context current: run many, yielding, on more threads than cores.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for iter := 0; iter < 20; iter++ {
				n := 1 + rng.IntN(100000)
				src := make([]float64, n)
				for i := range src {
					src[i] = rng.NormFloat64()
				}
				b, err := c.Alloc(int64(8 * n))
				if err != nil {
					errs <- err
					return
				}
				runtime.Gosched()
				dst := make([]float64, n)
				err = errors.Join(Upload(b, src), Download(dst, b), b.Free())
				if err != nil {
					errs <- err
					return
				}
				for i := range src {
					if src[i] != dst[i] {
						errs <- errors.New("round trip changed data")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGPUErrorsCarryTheDriversMessage(t *testing.T) {
	c := openGPU(t)
	_, err := c.Alloc(1 << 60)
	var ce *Error
	if !errors.As(err, &ce) || ce.Name != "CUDA_ERROR_OUT_OF_MEMORY" || !strings.Contains(err.Error(), "cuMemAlloc") {
		t.Errorf("huge Alloc: err = %v, want cuMemAlloc CUDA_ERROR_OUT_OF_MEMORY", err)
	}
	_, err = c.LoadModule("garbage", []byte("not a module"))
	if err == nil || !strings.Contains(err.Error(), "load module garbage") {
		t.Errorf("garbage module: err = %v", err)
	}
	bad := ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry broken() { no_such_instruction; }\n"
	_, err = c.LoadModule("broken.ptx", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "no_such_instruction") {
		t.Errorf("bad PTX: err = %v, want the JIT log naming the bad instruction", err)
	}
	b, err := c.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	if err := Upload(b, make([]float64, 9)); err == nil {
		t.Error("upload past the end succeeded")
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
}

func TestGPULaunchRunsAKernelAndRejectsABadShape(t *testing.T) {
	c := openGPU(t)
	ptx := `.version 7.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 p, .param .f64 s, .param .u32 n) {
	.reg .u64 %a; .reg .u32 %i, %n; .reg .f64 %x, %s; .reg .pred %q;
	ld.param.u64 %a, [p]; ld.param.f64 %s, [s]; ld.param.u32 %n, [n];
	mov.u32 %i, %tid.x; setp.ge.u32 %q, %i, %n; @%q ret;
	cvta.to.global.u64 %a, %a; mad.wide.u32 %a, %i, 8, %a;
	ld.global.f64 %x, [%a]; mul.f64 %x, %x, %s; st.global.f64 [%a], %x; ret;
}
`
	m, err := c.LoadModule("scale.ptx", []byte(ptx))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unload()
	f, err := m.Function("scale")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Function("missing"); err == nil || !strings.Contains(err.Error(), "kernel missing") {
		t.Errorf("missing kernel: err = %v", err)
	}
	x := []float64{1, 2, 3, 4, 5}
	b, err := c.Alloc(8 * 5)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := Upload(b, x); err != nil {
		t.Fatal(err)
	}
	if err := f.Launch(Dim1(1), Dim1(32), 0, b, 3.0, uint32(4)); err != nil {
		t.Fatal(err)
	}
	if err := Download(x, b); err != nil {
		t.Fatal(err)
	}
	if want := []float64{3, 6, 9, 12, 5}; !equal(x, want) {
		t.Errorf("after scale: %v, want %v", x, want)
	}
	err = f.Launch(Dim1(1), Dim1(4096), 0, b, 3.0, uint32(4))
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "launch scale") {
		t.Errorf("4096-thread block: err = %v, want a launch error", err)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A copy from page-locked memory on a stream of its own lands where it
// should, and the default stream, told to wait for it, sees it.
func TestGPUAsyncCopyOrderedByEvents(t *testing.T) {
	c := openGPU(t)
	const n = 1 << 20
	h, err := c.AllocHost(n)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Free()
	b, err := c.Alloc(n + 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	s, err := c.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	copied, seen := mustEvent(t, c), mustEvent(t, c)
	src := h.Bytes()
	for i := range src {
		src[i] = byte(i*7 + i>>11)
	}
	if err := b.Memset(0); err != nil {
		t.Fatal(err)
	}
	if err := h.CopyToAsync(b, 4096, 16, n-16, s); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(copied.RecordOn(s), c.WaitEvent(nil, copied), seen.Record(), seen.Synchronize()); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n+4096)
	if err := Download(got, b); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := byte(0)
		if i >= 4096 && i < 4096+n-16 {
			want = src[i-4096+16]
		}
		if got[i] != want {
			t.Fatalf("byte %d is %d, want %d", i, got[i], want)
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

func mustEvent(t *testing.T, c *Context) *Event {
	t.Helper()
	e, err := c.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Destroy() })
	return e
}

// A peer copy queued on the destination's stream after an event of the
// source's context reads what the source wrote before the event, lands at
// its offset and nowhere else, and the destination's default stream, told
// to wait for it, sees it; an out-of-range copy or a stream of the wrong
// context is refused. Between GPUs 0 and 1 where the machine has two.
func TestGPUPeerCopyAsyncOrderedByEvents(t *testing.T) {
	src := openGPU(t)
	dst := src
	if n, err := src.Driver().DeviceCount(); err == nil && n > 1 {
		if dst, err = src.Driver().Open(1); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dst.Close() })
		if _, err := dst.EnablePeerAccess(src); err != nil {
			t.Fatal(err)
		}
	}
	const n = 1 << 22
	a, err := src.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := dst.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	s, err := dst.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(rand.IntN(256))
	}
	if err := errors.Join(Upload(a, want), b.Memset(0xee)); err != nil {
		t.Fatal(err)
	}
	written, copied, seen := mustEvent(t, src), mustEvent(t, dst), mustEvent(t, dst)
	const off, size = 4096, n/2 + 12
	if err := errors.Join(written.Record(), dst.WaitEvent(s, written), CopyPeerAsync(b, off, a, off, size, s),
		copied.RecordOn(s), dst.WaitEvent(nil, copied), seen.Record(), seen.Synchronize()); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := Download(got, b); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		w := byte(0xee)
		if i >= off && i < off+size {
			w = want[i]
		}
		if got[i] != w {
			t.Fatalf("GPU %d byte %d is %#x, want %#x", dst.Device().Ordinal, i, got[i], w)
		}
	}
	if err := CopyPeerAsync(b, n-8, a, 0, 16, s); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("a copy past the end: %v, want out of range", err)
	}
	if other, err := src.NewStream(); err == nil && src != dst {
		defer other.Destroy()
		if err := CopyPeerAsync(b, 0, a, 0, 16, other); err == nil || !strings.Contains(err.Error(), "on a stream of GPU") {
			t.Errorf("a copy on the source's stream: %v, want refused", err)
		}
	}
}
