package cublas

import (
	"errors"
	"strings"
	"testing"
)

func TestOpenWithoutCublasSaysWhatWasTried(t *testing.T) {
	l, err := Open()
	if err == nil {
		v, _ := l.Version()
		t.Skipf("cuBLAS %s is installed at %s", VersionString(v), l.Path())
	}
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("err = %v, want ErrNoLibrary", err)
	}
	for _, want := range []string{"no cuBLAS library", "libcublas.so.13", "libcublas.so.12"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenPathRejectsALibraryWithoutCublas(t *testing.T) {
	_, err := OpenPath("libm.so.6")
	if err == nil || !strings.Contains(err.Error(), "libm.so.6") || !strings.Contains(err.Error(), "cublasCreate_v2") {
		t.Errorf("err = %v, want it to name the library and the missing symbol", err)
	}
}

func TestCandidatesSearchCudaHomeFirst(t *testing.T) {
	t.Setenv("CUDA_HOME", "/opt/cuda-test")
	c := Candidates()
	if c[0] != "libcublas.so.13" || c[1] != "libcublas.so.12" {
		t.Errorf("sonames first, newest first: %v", c[:2])
	}
	if c[2] != "/opt/cuda-test/lib64/libcublas.so.13" {
		t.Errorf("then $CUDA_HOME: %v", c[2])
	}
}

func TestVersionString(t *testing.T) {
	if got := VersionString(130002); got != "13.0.2" {
		t.Errorf("VersionString(130002) = %q", got)
	}
	if got := VersionString(120910); got != "12.9.10" {
		t.Errorf("VersionString(120910) = %q", got)
	}
}
