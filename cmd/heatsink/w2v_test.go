package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `heatsink w2v-train` trains on a planted corpus and writes binary
// vectors and the vocabulary; `w2v-eval` scores the vectors on similarity
// and analogy sets and on the planted truth; a text corpus trains again
// with the saved vocabulary. All as real processes.
func TestW2VTrainAndEval(t *testing.T) {
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	const planted = "planted:tokens=60k,clusters=4,entities=4,noise=200"
	vectors, vocab := filepath.Join(dir, "v.bin"), filepath.Join(dir, "vocab.txt")
	out, err := exec.Command(bin, "w2v-train", "--set", "device=cpu", "--set", "corpus="+planted, "--set", "dim=24",
		"--set", "epochs=3", "--set", "table=100000", "--out", vectors, "--format", "binary", "--save-vocab", vocab).CombinedOutput()
	if err != nil {
		t.Fatalf("w2v-train: %v\n%s", err, out)
	}
	for _, want := range []string{"vectors of dimension 24 written to " + vectors, "words_per_s", "planted clusters", "planted analogies"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("w2v-train output lacks %q:\n%s", want, out)
		}
	}
	sets := filepath.Join(dir, "sets")
	os.Mkdir(sets, 0o755)
	files := map[string]string{
		"ws353.txt":             "k0m1\tk0m2\t9\nk0m1\tk1m2\t1\nk2m0\tk2m3\t8\nk2m0\tzebra\t5\n",
		"ws353_similarity.txt":  "k0m1 k0m2 9\nk0m1 k1m2 1\n",
		"ws353_relatedness.txt": "k3m1 k3m2 9\nk3m1 k1m2 1\n",
		"SimLex999.txt":         "k1m1 k1m0 9\nk1m1 k0m0 2\nk1m1 k2m0 1\n",
		"google.txt":            "e0r0 e0r1 e1r0 e1r1\ne0r0 e0r1 e2r0 unicorn\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(sets, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err = exec.Command(bin, "w2v-eval", vectors, "--sets", sets, "--planted", planted).CombinedOutput()
	if err != nil {
		t.Fatalf("w2v-eval: %v\n%s", err, out)
	}
	for _, want := range []string{"vectors of dimension 24", "ws353.txt", "3/4 (75%)", "SimLex999.txt", "3CosAdd", "1/2 (50%)", "purity", "72/72"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("w2v-eval output lacks %q:\n%s", want, out)
		}
	}
	// A text corpus with the saved vocabulary: words outside it are dropped.
	corpus := filepath.Join(dir, "c.txt")
	os.WriteFile(corpus, []byte(strings.Repeat("k0m1 k0m2 n1 n2 unseen k0m3\n", 200)), 0o644)
	text := filepath.Join(dir, "v.txt")
	out, err = exec.Command(bin, "w2v-train", "--set", "device=cpu", "--set", "corpus="+corpus, "--set", "vocab="+vocab,
		"--set", "dim=8", "--out", text).CombinedOutput()
	if err != nil {
		t.Fatalf("w2v-train with a saved vocabulary: %v\n%s", err, out)
	}
	head, _ := os.ReadFile(text)
	if !strings.HasPrefix(string(head), "272 8\n") || !strings.Contains(string(out), "vectors of dimension 8") {
		t.Errorf("output %s", out)
	}
	// Bad input is an error naming it.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"w2v-eval", filepath.Join(dir, "none.bin")}, "none.bin"},
		{[]string{"w2v-eval", vocab}, "header"},
		{[]string{"w2v-eval", vectors, "--sets", dir}, "ws353.txt"},
		{[]string{"w2v-train", "--set", "dim=0"}, "dim"},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("heatsink %v: %v, output %s; want a failure mentioning %q", c.args, err, out, c.want)
		}
	}
}
