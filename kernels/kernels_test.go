package kernels

import (
	"bytes"
	"embed"
	"encoding/binary"
	"errors"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// fatbinMagic starts every fatbin nvcc writes.
const fatbinMagic = 0xBA55ED50

// sm90 holds the compute_90 PTX, which no binary but this test's embeds.
//
//go:embed gen/*.sm90.ptx
var sm90 embed.FS

var entryRE = regexp.MustCompile(`(?m)^\.(?:visible )?\.entry (\w+)\(`)

// entries lists the kernels a PTX file defines, sorted.
func entries(ptx []byte) []string {
	var out []string
	for _, m := range entryRE.FindAllSubmatch(ptx, -1) {
		out = append(out, string(m[1]))
	}
	slices.Sort(out)
	return out
}

func TestEmbeddedModulesArePresentAndWellFormed(t *testing.T) {
	for _, name := range Modules {
		fatbin, ptx, err := Image(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(fatbin) < 16 || binary.LittleEndian.Uint32(fatbin) != fatbinMagic {
			t.Errorf("%s.fatbin: %d bytes, not a fatbin (no magic %#x)", name, len(fatbin), fatbinMagic)
		}
		hopper, err := sm90.ReadFile("gen/" + name + ".sm90.ptx")
		if err != nil {
			t.Fatal(err)
		}
		for file, text := range map[string][]byte{name + ".ptx": ptx, name + ".sm90.ptx": hopper} {
			target := "sm_80"
			if strings.Contains(file, "sm90") {
				target = "sm_90"
			}
			if !regexp.MustCompile(`(?m)^\.target ` + target + `\b`).Match(text) {
				t.Errorf("%s: no .target %s line", file, target)
			}
		}
		// The package tests check the compute_80 PTX for the kernels they
		// look up; the Hopper PTX must define the same ones.
		if a, b := entries(ptx), entries(hopper); len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("%s.ptx defines kernels %v, %s.sm90.ptx %v", name, a, name, b)
		}
	}
	if _, _, err := Image("nonexistent"); err == nil {
		t.Error("Image(nonexistent) succeeded")
	}
}

// TestOnlyWhatLoadModuleReadsIsEmbedded keeps the compute_90 PTX (about a
// megabyte that only tests read) and stray files out of every binary.
func TestOnlyWhatLoadModuleReadsIsEmbedded(t *testing.T) {
	want := map[string]bool{}
	for _, name := range Modules {
		want["gen/"+name+".fatbin"], want["gen/"+name+".ptx"] = true, true
	}
	err := fs.WalkDir(gen, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !want[path] {
			t.Errorf("%s is embedded, but LoadModule never reads it", path)
		}
		delete(want, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for path := range want {
		t.Errorf("%s is not embedded", path)
	}
}

func TestDiscoverWithoutDriverRecordsWhy(t *testing.T) {
	inv := Discover()
	if inv.DriverVersion != "" {
		t.Skipf("a CUDA driver is installed (CUDA %s)", inv.DriverVersion)
	}
	if !errors.Is(inv.DriverErr, cuda.ErrNoDriver) {
		t.Fatalf("DriverErr = %v, want ErrNoDriver", inv.DriverErr)
	}
	var buf bytes.Buffer
	if err := inv.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "no CUDA driver: libcuda.so.1") || !strings.Contains(buf.String(), "device=cpu") {
		t.Errorf("table = %q", buf.String())
	}
}

func TestWriteTableListsEveryGPU(t *testing.T) {
	inv := Inventory{DriverVersion: "13.0", DriverPath: "/usr/lib/libcuda.so.1", Devices: []cuda.DeviceInfo{
		{Ordinal: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-1", Major: 9, SMs: 132, MemoryBytes: 80 << 30, ClockMHz: 1980},
		{Ordinal: 1, Name: "NVIDIA A100", UUID: "GPU-2", Major: 8, SMs: 108, MemoryBytes: 40 << 30},
	}, CublasVersion: "13.0.2", CublasPath: "/usr/local/cuda/lib64/libcublas.so.13"}
	var buf bytes.Buffer
	if err := inv.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CUDA driver 13.0", "NVIDIA H100 80GB HBM3", "9.0", "132", "80.0 GiB", "NVIDIA A100", "8.0", "cuBLAS 13.0.2"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestParseDevice(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "3": 3, "cpu": -1, "CPU": -1} {
		if got, err := ParseDevice(in); err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "gpu0", "1.5"} {
		if _, err := ParseDevice(in); err == nil || !strings.Contains(err.Error(), "device=") {
			t.Errorf("ParseDevice(%q) err = %v, want an error naming the parameter", in, err)
		}
	}
}

func FuzzParseDevice(f *testing.F) {
	for _, s := range []string{"0", "cpu", "CPU", "-1", "", "99999999999999999999", "1e3", " 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseDevice(s)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), "device=") {
				t.Errorf("ParseDevice(%q) error %q does not name the parameter", s, err)
			}
		case n == -1:
			if !strings.EqualFold(s, "cpu") {
				t.Errorf("ParseDevice(%q) = cpu", s)
			}
		case n < 0:
			t.Errorf("ParseDevice(%q) = %d", s, n)
		}
	})
}
