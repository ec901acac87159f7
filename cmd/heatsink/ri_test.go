package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `heatsink ri train` writes word2vec vectors and scores them, `ri nn`
// queries them and `ri eval` scores them again, all as real processes.
func TestRITrainNearestEval(t *testing.T) {
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	text := strings.Repeat("the king rode to the city and the queen rode to the town\nthe dog ate the bone and the cat ate the fish\n", 30)
	sim := filepath.Join(dir, "sim.txt")
	if err := os.WriteFile(corpus, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sim, []byte("king queen 9\ndog cat 8\nking fish 1\ncity zebra 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vectors := filepath.Join(dir, "v.txt")
	out, err := exec.Command(bin, "ri", "train", "--set", "corpus="+corpus, "--set", "device=cpu", "--set", "dim=64",
		"--set", "nonzeros=4", "--set", "window=2", "--out", vectors, "--eval", sim).CombinedOutput()
	if err != nil {
		t.Fatalf("ri train: %v\n%s", err, out)
	}
	for _, want := range []string{"vectors of dimension 64 written to " + vectors, "term_vectors_tokens_per_s", "sim.txt", "3 (75%)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("ri train output lacks %q:\n%s", want, out)
		}
	}
	head, err := os.ReadFile(vectors)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(head), "13 64\nthe ") {
		t.Errorf("vectors file starts %q", head[:min(40, len(head))])
	}
	out, err = exec.Command(bin, "ri", "nn", "--vectors", vectors, "-n", "3", "king").CombinedOutput()
	if err != nil {
		t.Fatalf("ri nn: %v\n%s", err, out)
	}
	if fields := strings.Fields(string(out)); len(fields) != 7 || fields[0] != "king:" {
		t.Errorf("ri nn printed %q, want king: and three neighbours with cosines", out)
	}
	out, err = exec.Command(bin, "ri", "nn", "--vectors", vectors, "zebra").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `"zebra" has no vector`) {
		t.Errorf("ri nn of an unknown word: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "ri", "eval", "--vectors", vectors, sim).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SPEARMAN") {
		t.Errorf("ri eval: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "ri", "train", "--set", "corpus="+corpus, "--set", "dim=1", "--out", vectors).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "dim") {
		t.Errorf("ri train with dim=1: %v\n%s", err, out)
	}
}
