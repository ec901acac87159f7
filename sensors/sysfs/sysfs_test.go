package sysfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadIntValuesAndErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		want          int64
		wantErr       error  // errors.Is target; nil for success
		wantMsg       string // substring of the error
	}{
		{"millidegrees", "45000\n", 45000, nil, ""},
		{"negative", "-273150\n", -273150, nil, ""},
		{"padded", "  12 \n", 12, nil, ""},
		{"empty", "", 0, ErrEmpty, "empty value"},
		{"only newline", "\n", 0, ErrEmpty, "empty value"},
		{"not a number", "N/A\n", 0, strconv.ErrSyntax, `"N/A" is not a decimal integer`},
		{"float", "45.5\n", 0, strconv.ErrSyntax, "not a decimal integer"},
		{"huge", "99999999999999999999999\n", 0, strconv.ErrRange, `"99999999999999999999999" is out of range`},
		{"two values", "1 2\n", 0, strconv.ErrSyntax, "not a decimal integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(t, dir, tt.name, tt.content)
			got, err := ReadInt(p)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("ReadInt = %d, %v; want %d", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadInt error %v, want one wrapping %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q should name %s and say %q", err, p, tt.wantMsg)
			}
		})
	}
}

func TestReadAttrErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadInt(filepath.Join(dir, "gone"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "open "+filepath.Join(dir, "gone")) {
		t.Errorf("missing file: %v", err)
	}
	// A directory opens but cannot be read: an error, not a hang or a zero.
	if _, err := ReadInt(dir); err == nil || !strings.Contains(err.Error(), "read "+dir) {
		t.Errorf("directory: %v", err)
	}
	// A value that fills the buffer may have been cut: refused.
	p := write(t, dir, "long", strings.Repeat("1", 64))
	if _, err := ReadInt(p); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("64-byte value: %v", err)
	}
	p = write(t, dir, "label", "Package id 0\n")
	if s, err := ReadString(p); err != nil || s != "Package id 0" {
		t.Errorf("ReadString = %q, %v", s, err)
	}
	p = write(t, dir, "counter", "262143328850\n")
	if v, err := ReadUint(p); err != nil || v != 262143328850 {
		t.Errorf("ReadUint = %d, %v", v, err)
	}
	p = write(t, dir, "neg", "-1\n")
	if _, err := ReadUint(p); !errors.Is(err, strconv.ErrSyntax) {
		t.Errorf("ReadUint of -1: %v", err)
	}
}

func TestReadFileReadsPastOnePageAndReusesTheBuffer(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("cpu0 1 2 3 4 5 6 7 8 9 10\n"), 1000) // 26 kB, like /proc/stat on a large box
	p := write(t, dir, "stat", string(big))
	got, err := ReadFile(p, nil)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("ReadFile: %d bytes, %v; want %d bytes", len(got), err, len(big))
	}
	again, err := ReadFile(p, got)
	if err != nil || !bytes.Equal(again, big) || &again[0] != &got[0] {
		t.Errorf("second ReadFile did not reuse the buffer or differs (err %v)", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "gone"), got); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzParseInt checks the sysfs value parser against strconv on the
// trimmed input: same value when it succeeds, a typed error when not.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"45000\n", "-273150\n", "", "\n", "abc", "1e3", "+5", "99999999999999999999", " 7 ", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseInt(b)
		trimmed := strings.Trim(string(b), " \n\t\r\x00")
		want, werr := strconv.ParseInt(trimmed, 10, 64)
		switch {
		case trimmed == "":
			if !errors.Is(err, ErrEmpty) {
				t.Fatalf("ParseInt(%q) = %d, %v; want ErrEmpty", b, v, err)
			}
		case werr != nil:
			if err == nil || !(errors.Is(err, strconv.ErrSyntax) || errors.Is(err, strconv.ErrRange)) {
				t.Fatalf("ParseInt(%q) = %d, %v; strconv says %v", b, v, err, werr)
			}
		default:
			if err != nil || v != want {
				t.Fatalf("ParseInt(%q) = %d, %v; want %d", b, v, err, want)
			}
		}
		u, uerr := ParseUint(b)
		if uerr == nil && (err == nil && v >= 0 && uint64(v) != u) {
			t.Fatalf("ParseUint(%q) = %d, ParseInt = %d", b, u, v)
		}
	})
}

func TestAttrRereadsAtOffsetZeroAndReopensAfterFailure(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "temp1_input", "45000\n")
	a := NewAttr(p)
	defer a.Close()
	if v, err := a.ReadInt(); err != nil || v != 45000 {
		t.Fatalf("first read: %d, %v", v, err)
	}
	// The kernel rewrites the value in place; the open file sees it.
	write(t, dir, "temp1_input", "47125\n")
	if v, err := a.ReadInt(); err != nil || v != 47125 {
		t.Fatalf("second read: %d, %v", v, err)
	}
	// A removed file is Gone once the Attr opens the path again.
	a.Close()
	os.Remove(p)
	if _, err := a.ReadInt(); !Gone(err) {
		t.Fatalf("read after removal: %v, want a Gone error", err)
	}
	// A failed read closes the file; the next read opens the path again
	// and finds whatever is there now.
	os.Mkdir(p, 0o755) // opens, but reads fail with EISDIR
	if _, err := a.ReadInt(); err == nil || Gone(err) || !strings.Contains(err.Error(), "read "+p) {
		t.Fatalf("read of a directory: %v", err)
	}
	os.Remove(p)
	write(t, dir, "temp1_input", "39000\n")
	if v, err := a.ReadInt(); err != nil || v != 39000 {
		t.Fatalf("read after the file came back: %d, %v", v, err)
	}
	if err := a.Close(); err != nil || a.Close() != nil {
		t.Errorf("Close twice: %v", err)
	}
	write(t, dir, "energy_uj", "262143328850\n")
	if v, err := NewAttr(filepath.Join(dir, "energy_uj")).ReadUint(); err != nil || v != 262143328850 {
		t.Errorf("ReadUint: %d, %v", v, err)
	}
}
