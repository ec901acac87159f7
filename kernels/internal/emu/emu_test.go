package emu

import (
	"bytes"
	"strings"
	"testing"
)

func TestBufferCopiesAndFills(t *testing.T) {
	var freed int64
	a, err := Alloc(8, 0xA5, func(n int64) { freed += n })
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8)
	if err := a.Download(got); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{0xA5}, 8)) {
		t.Fatalf("fresh buffer reads %x (%v), want a5 fill", got, err)
	}
	if err := a.Upload([]byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	b, _ := Alloc(4, 0, nil)
	if err := CopyPeer(b, 1, a, 5, 3); err != nil {
		t.Fatal(err)
	}
	got = got[:4]
	if err := b.Download(got); err != nil || !bytes.Equal(got, []byte{0, 6, 7, 8}) {
		t.Fatalf("after the peer copy %x (%v), want 00060708", got, err)
	}
	if err := CopyPeer(b, 2, a, 0, 3); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("copy past the end: %v", err)
	}
	if err := b.Upload(make([]byte, 5)); err == nil {
		t.Error("an upload larger than the buffer was accepted")
	}
	a.Free()
	a.Free()
	if freed != 8 || a.Ptr() != nil {
		t.Errorf("freed %d bytes, pointer %v after Free twice", freed, a.Ptr())
	}
}

// The base device counts what is live in MemFree, as a GPU would, so that
// an engine's leak shows under emulation, and moves bytes through the
// kernels.Buffer interface the engines hold.
func TestDeviceCountsLiveMemory(t *testing.T) {
	d := NewDevice("test", 1, 0xff)
	free0, _ := d.MemFree()
	b, err := d.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	if free, _ := d.MemFree(); free != free0-16 {
		t.Errorf("MemFree %d after a 16-byte Alloc, want %d", free, free0-16)
	}
	if err := d.Upload(b, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if err := d.Download(got, b); err != nil || !bytes.Equal(got, []byte{1, 2, 3, 0xff}) {
		t.Errorf("read back %x (%v), want 010203ff", got, err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if free, _ := d.MemFree(); free != free0 {
		t.Errorf("MemFree %d after Free, want %d", free, free0)
	}
}
