package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A spool is bound to the destination it was first opened for: reopening
// it for the same one sends what it holds, another is refused naming both,
// and points an older heatsink left without a destination are refused for
// every destination, not claimed by the first that comes.
func TestSpoolBelongsToItsDestination(t *testing.T) {
	const a, b = `http://db-a:8086 org "" bucket "x"`, `http://db-b:8086 org "" bucket "x"`
	tests := []struct {
		name     string
		before   string // destination of the first open; "" for an older heatsink's
		points   int    // appended by the first open and left unsent
		open     string
		wantErr  []string // substrings of the error; nil for success
		wantDest string   // recorded after the open
	}{
		{"same destination", a, 10, a, nil, a},
		{"another destination", a, 10, b, []string{"for " + a, "not for " + b}, a},
		{"another destination of an empty spool", a, 0, b, []string{"for " + a, "not for " + b}, a},
		{"older spool with points", "", 10, a, []string{"10 unsent points", "no stated destination", a}, ""},
		{"older spool, empty", "", 0, a, nil, a},
		{"unchecked open", a, 10, "", nil, a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{Destination: tt.before})
			if err != nil {
				t.Fatal(err)
			}
			if tt.points > 0 {
				if err := s.Append(lines(0, tt.points), tt.points); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			s, err = Open(dir, Options{Destination: tt.open})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("open for %q: %v", tt.open, err)
				}
				if got := len(drain(t, s, 100)); got != tt.points {
					t.Errorf("sent %d points, want the %d left", got, tt.points)
				}
				s.Close()
			} else {
				if err == nil {
					s.Close()
					t.Fatalf("open for %q succeeded, want an error", tt.open)
				}
				if !errors.Is(err, ErrOtherDestination) {
					t.Errorf("error %v is not ErrOtherDestination", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			}
			info, err := Inspect(dir)
			if err != nil {
				t.Fatal(err)
			}
			if info.Destination != tt.wantDest {
				t.Errorf("destination recorded: %q, want %q", info.Destination, tt.wantDest)
			}
		})
	}
}

// Inspect reads a spool another process has open, without its lock: the
// points waiting, the holder's pid, the destination; Find lists the old
// single-directory layout and the per-destination subdirectories alike.
func TestInspectAndFindReadSpoolsInUse(t *testing.T) {
	root := t.TempDir()
	legacy, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := legacy.Append(lines(0, 7), 7); err != nil {
		t.Fatal(err)
	}
	legacy.Close()
	s, err := Open(filepath.Join(root, "db-a"), Options{Destination: "A"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(lines(0, 5), 5); err != nil {
		t.Fatal(err)
	}
	b, err := s.Next(2, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(root, "not-a-spool"), 0o700)

	infos, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 {
		t.Fatalf("found %d spools, want 2: %+v", len(infos), infos)
	}
	old, cur := infos[0], infos[1]
	if old.Dir != root || old.Destination != "" || old.UnsentPoints != 7 || old.InUseBy != "" {
		t.Errorf("old layout: %+v, want %s, no destination, 7 points, not in use", old, root)
	}
	if cur.Destination != "A" || cur.UnsentPoints != 3 || cur.InUseBy != strconv.Itoa(os.Getpid()) || cur.Oldest.IsZero() {
		t.Errorf("spool in use: %+v, want destination A, 3 points, held by pid %d, an oldest time", cur, os.Getpid())
	}
	if st := s.Stats(); cur.UnsentBytes != st.UnsentBytes {
		t.Errorf("Inspect says %d unsent bytes, the open spool %d", cur.UnsentBytes, st.UnsentBytes)
	}
}
