package dl

import (
	"strings"
	"testing"
)

func TestOpenFindsSymbolsAndTheirFile(t *testing.T) {
	l, err := Open("libm.so.6")
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Sym("cos")
	if err != nil {
		t.Fatal(err)
	}
	if path := Path(p); !strings.Contains(path, "libm") {
		t.Errorf("Path(cos) = %q, want libm's file", path)
	}
	if _, err := l.Sym("cuInit"); err == nil || !strings.Contains(err.Error(), "symbol cuInit") {
		t.Errorf("Sym(cuInit) err = %v", err)
	}
}

func TestOpenMissingLibrarySaysWhy(t *testing.T) {
	_, err := Open("libheatsink-missing.so.9")
	if err == nil || !strings.Contains(err.Error(), "libheatsink-missing.so.9") {
		t.Errorf("err = %v, want the loader's message naming the library", err)
	}
}
