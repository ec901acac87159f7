package lda

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readMatrixMarket parses a coordinate integer matrix into a dense one.
func readMatrixMarket(t *testing.T, path string) [][]uint32 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	if sc.Text() != "%%MatrixMarket matrix coordinate integer general" {
		t.Fatalf("%s: header %q", path, sc.Text())
	}
	for sc.Scan() && strings.HasPrefix(sc.Text(), "%") {
	}
	var rows, cols, nnz int
	if _, err := fmt.Sscan(sc.Text(), &rows, &cols, &nnz); err != nil {
		t.Fatalf("%s: size line %q", path, sc.Text())
	}
	out := make([][]uint32, rows)
	for i := range out {
		out[i] = make([]uint32, cols)
	}
	lines := 0
	for sc.Scan() {
		var r, c int
		var v uint32
		if _, err := fmt.Sscan(sc.Text(), &r, &c, &v); err != nil || v == 0 {
			t.Fatalf("%s: line %q", path, sc.Text())
		}
		out[r-1][c-1] = v
		lines++
	}
	if lines != nnz {
		t.Fatalf("%s: %d entries, header says %d", path, lines, nnz)
	}
	return out
}

// The model written to a directory is the plain sampler's dense counts in
// corpus ids: W by vocabulary line, D by document, both Matrix Market;
// topics.txt lists each topic's most frequent words.
func TestModelOutput(t *testing.T) {
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 60; s.Zipf = 1 })
	cfg := Config{Topics: 6, Alpha: 0.1, Beta: 0.01, Seed: 2}
	plain := newPlainSampler(cfg, c)
	tr, err := NewTrainer(context.Background(), c, cfg, CPU(Options{Threads: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for range 5 {
		plain.step()
		if _, err := tr.Step(context.Background(), false); err != nil {
			t.Fatal(err)
		}
	}
	m, err := tr.Model(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.WriteDir(dir, 4); err != nil {
		t.Fatal(err)
	}
	w := readMatrixMarket(t, filepath.Join(dir, WordTopicFile))
	d := readMatrixMarket(t, filepath.Join(dir, DocTopicFile))
	k := cfg.Topics
	for v := range c.VocabSize() {
		for topic := range k {
			if w[v][topic] != plain.w[v*k+topic] {
				t.Fatalf("W[%d][%d] written %d, the plain sampler counts %d", v, topic, w[v][topic], plain.w[v*k+topic])
			}
		}
	}
	for doc := range c.Docs() {
		for topic := range k {
			if d[doc][topic] != plain.d[doc*k+topic] {
				t.Fatalf("D[%d][%d] written %d, the plain sampler counts %d", doc, topic, d[doc][topic], plain.d[doc*k+topic])
			}
		}
	}
	vocab, err := os.ReadFile(filepath.Join(dir, VocabularyFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(vocab)); len(got) != c.VocabSize() || got[7] != c.Vocab[7] {
		t.Errorf("vocab.txt has %d words", len(got))
	}
	topics, err := os.ReadFile(filepath.Join(dir, TopicsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(topics)), "\n")
	if len(lines) != k {
		t.Fatalf("topics.txt has %d lines, want %d", len(lines), k)
	}
	// Topic 0's first word is the word with most tokens of topic 0.
	best, bestN := 0, uint32(0)
	for v := range c.VocabSize() {
		if n := plain.w[v*k]; n > bestN {
			best, bestN = v, n
		}
	}
	if f := strings.Fields(lines[0]); len(f) != 5+4 || f[5] != c.Vocab[best] {
		t.Errorf("topic 0's line %q, want 4 words starting with %q", lines[0], c.Vocab[best])
	}
}
