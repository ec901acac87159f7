package gputest

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels"
)

// The checks below hold the CUDA sources of the lda, ri and w2v packages
// to their Go host code on a machine with no GPU, so that a kernel renamed
// or a constant changed on one side only fails CI, not a device run.

// KernelSource reads module's CUDA source, kernels/MODULE/MODULE.cu: go
// test runs in the package's folder, a carried test binary from the
// repository's root.
func KernelSource(t testing.TB, module string) []byte {
	t.Helper()
	src, err := os.ReadFile(module + ".cu")
	if os.IsNotExist(err) {
		src, err = os.ReadFile(filepath.Join("kernels", module, module+".cu"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// kernelDecl matches a kernel's declaration up to its name.
var kernelDecl = regexp.MustCompile(`extern "C" __global__ void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\(`)

// KernelNames are the kernels src declares one by one (a kernel a macro
// stamps out is the caller's to add).
func KernelNames(src []byte) []string {
	var names []string
	for _, m := range kernelDecl.FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	return names
}

// CheckKernels reports where the kernels module's source defines differ
// from those the host launches.
func CheckKernels(t testing.TB, module string, defined, launched []string) {
	t.Helper()
	defined, launched = slices.Clone(defined), slices.Clone(launched)
	slices.Sort(defined)
	slices.Sort(launched)
	if !slices.Equal(defined, launched) {
		t.Errorf("%s.cu defines kernels %q, the host launches %q", module, defined, launched)
	}
}

// CheckDefines reports each macro of host that src does not #define as
// the integer the host assumes.
func CheckDefines(t testing.TB, module string, src []byte, host map[string]int) {
	t.Helper()
	for macro, want := range host {
		m := regexp.MustCompile(`(?m)^#define ` + macro + ` (\d+)(?:\s|$)`).FindSubmatch(src)
		if m == nil {
			t.Errorf("%s.cu: no #define %s", module, macro)
			continue
		}
		if v, _ := strconv.Atoi(string(m[1])); v != want {
			t.Errorf("%s.cu: %s is %d, the host assumes %d", module, macro, v, want)
		}
	}
}

// EmbeddedPTX is the compute_80 PTX of module as embedded, checked to hold
// every kernel of functions; ok is false, and the test told why, where the
// module has not been generated yet (script names the bench script that
// does).
func EmbeddedPTX(t testing.TB, module, script string, functions []string) (ptx string, ok bool) {
	t.Helper()
	_, b, err := kernels.Image(module)
	if err != nil {
		t.Logf("no embedded %s module yet (%s generates it): %v", module, script, err)
		return "", false
	}
	ptx = string(b)
	for _, k := range functions {
		if !strings.Contains(ptx, ".entry "+k+"(") {
			t.Errorf("embedded %s.ptx: no kernel %s", module, k)
		}
	}
	return ptx, true
}

// ClangPTX compiles module's CUDA source for sm_80 with clang's CUDA front
// end (no CUDA toolkit needed: the package's testdata/clang-cuda-stub.h
// declares the intrinsics), -Wall -Werror and flags added, and returns the
// PTX after checking it holds every kernel of functions. It skips without
// clang, without clang's NVPTX target, or outside the source tree.
func ClangPTX(t testing.TB, module string, functions []string, flags ...string) string {
	t.Helper()
	clang, err := exec.LookPath("clang-14")
	if err != nil {
		if clang, err = exec.LookPath("clang"); err != nil {
			t.Skip("no clang")
		}
	}
	src := module + ".cu"
	if _, err := os.Stat(src); err != nil {
		t.Skip("not in the source tree")
	}
	ptx := filepath.Join(t.TempDir(), module+".ptx")
	args := []string{"-x", "cuda", "--cuda-gpu-arch=sm_80", "--cuda-device-only", "-nocudalib", "-nocudainc",
		"-Xclang", "-target-feature", "-Xclang", "+ptx70", "-ffp-contract=off", "-std=c++17", "-O3", "-Wall", "-Werror"}
	args = append(append(args, flags...), "-include", "testdata/clang-cuda-stub.h", "-S", "-o", ptx, src)
	out, err := exec.Command(clang, args...).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "nvptx") && strings.Contains(string(out), "target") {
			t.Skipf("clang has no NVPTX target: %s", out)
		}
		t.Fatalf("clang: %v\n%s", err, out)
	}
	text, err := os.ReadFile(ptx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range functions {
		if !strings.Contains(string(text), ".entry "+k+"(") {
			t.Errorf("PTX has no kernel %s", k)
		}
	}
	return string(text)
}

// CheckEmulatorStamp checks that the emulator source at emu records the
// SHA-256 of src, module's CUDA source: the emulator compiles src in by an
// #include that Go's build cache does not see, so without the stamp an
// edited kernel would leave a stale emulator. regenerate says how to
// restamp.
func CheckEmulatorStamp(t testing.TB, module string, src []byte, emu, regenerate string) {
	t.Helper()
	text, err := os.ReadFile(emu)
	if os.IsNotExist(err) {
		t.Skip("not in the source tree")
	}
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("// %s.cu sha256: %x\n", module, sha256.Sum256(src))
	if !strings.Contains(string(text), want) {
		t.Fatalf("%s does not record the current %s.cu (%q): %s", emu, module, strings.TrimSpace(want), regenerate)
	}
}

// NeedDevice skips the test, saying why, when no CUDA driver loads, unless
// emulated: a test built with an emulator's tag runs its kernels on the
// CPU.
func NeedDevice(t testing.TB, emulated bool) {
	t.Helper()
	if !emulated {
		NeedGPU(t)
	}
}

// NeedDriver skips the test under emulation, where it goes through paths
// (a workload's Start, another package's kernels) that open the CUDA
// driver themselves, and without a GPU.
func NeedDriver(t testing.TB, emulated bool) {
	t.Helper()
	if emulated {
		t.Skip("skipping under emulation: needs the CUDA driver")
	}
	NeedGPU(t)
}
