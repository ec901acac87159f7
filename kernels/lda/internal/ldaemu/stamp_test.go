//go:build ldaemu

package ldaemu

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The emulator is built from the lda.cu it claims: emu.cpp records the
// source's hash (see stamp.sh).
func TestStampIsCurrent(t *testing.T) {
	src, err := os.ReadFile("../../lda.cu")
	if err != nil {
		t.Fatal(err)
	}
	emu, err := os.ReadFile("emu.cpp")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("// lda.cu sha256: %x\n", sha256.Sum256(src))
	if !strings.Contains(string(emu), want) {
		t.Fatalf("emu.cpp does not record the current lda.cu (%q): run go generate ./kernels/lda/...", strings.TrimSpace(want))
	}
}
