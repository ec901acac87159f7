package residency

import (
	"os"
	"strings"
	"testing"
)

func TestParseSmapsReadsEveryRegion(t *testing.T) {
	f, err := os.Open("testdata/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	maps, err := ParseSmaps(f)
	if err != nil {
		t.Fatal(err)
	}
	// testdata/smaps is the start of a heatsink collect's smaps (its ELF
	// header, code, constants, the RELRO page the dynamic linker wrote,
	// data), then an anonymous heap arena, a deleted library whose path
	// holds a space, and the stack.
	want := []struct {
		start, end  uint64
		perms, path string
		rss, anon   uint64
		clean       bool
	}{
		{0x400000, 0x411000, "r--p", "/usr/local/bin/heatsink", 68, 0, true},
		{0x411000, 0xed6000, "r-xp", "/usr/local/bin/heatsink", 9444, 0, true},
		{0xed6000, 0x1b6f000, "r--p", "/usr/local/bin/heatsink", 7844, 0, true},
		{0x1b6f000, 0x1b70000, "r--p", "/usr/local/bin/heatsink", 4, 4, false},
		{0x1b70000, 0x20c0000, "rw-p", "/usr/local/bin/heatsink", 3012, 104, false},
		{0x1c6459c00000, 0x1c6459e00000, "rw-p", "", 1536, 1536, false},
		{0x7f7ccb110000, 0x7f7ccb136000, "r--p", "/opt/site tools/lib/libfoo.so (deleted)", 152, 0, true},
		{0x7ffd3f2b9000, 0x7ffd3f2da000, "rw-p", "[stack]", 20, 20, false},
	}
	if len(maps) != len(want) {
		t.Fatalf("%d regions, want %d: %+v", len(maps), len(want), maps)
	}
	for i, w := range want {
		m := maps[i]
		if m.Start != w.start || m.End != w.end || m.Perms != w.perms || m.Path != w.path || m.RssKiB != w.rss || m.AnonKiB != w.anon {
			t.Errorf("region %d = %+v, want %+v", i, m, w)
		}
		if m.Clean() != w.clean {
			t.Errorf("region %d (%s %s, %d KiB written): Clean() = %v, want %v", i, m.Perms, m.Path, m.AnonKiB, m.Clean(), w.clean)
		}
	}
}

func TestParseSmapsNamesTheBadLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"field first", "Rss: 4 kB\n", "line 1: field \"Rss\" before any region"},
		{"short header", "00400000-00411000 r--p 00000000\n", "line 1: region header"},
		{"bad range", "0040zz00-00411000 r--p 00000000 fe:00 1 /bin/x\n", "bad address range"},
		{"reversed range", "00411000-00400000 r--p 00000000 fe:00 1 /bin/x\n", "bad address range"},
		{"bad perms", "00400000-00411000 r-p 00000000 fe:00 1 /bin/x\n", "bad permissions"},
		{"bad rss", "00400000-00411000 r--p 00000000 fe:00 1 /bin/x\nSize: 68 kB\nRss: lots\n", "line 3: Rss: value \"lots\""},
		{"bad unit", "00400000-00411000 r--p 00000000 fe:00 1 /bin/x\nAnonymous: 4 MB\n", "line 2: Anonymous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSmaps(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func FuzzParseSmaps(f *testing.F) {
	seed, err := os.ReadFile("testdata/smaps")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("00400000-00411000 r--p 00000000 fe:00 1\nRss: 4 kB\n")
	f.Fuzz(func(t *testing.T, in string) {
		maps, err := ParseSmaps(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.End < m.Start || len(m.Perms) != 4 {
				t.Errorf("accepted region %+v", m)
			}
			if m.Clean() && (m.Path == "" || m.Perms[1] == 'w' || m.AnonKiB != 0) {
				t.Errorf("region %+v is called clean", m)
			}
		}
	})
}
