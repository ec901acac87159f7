package w2v

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func sampleVectors(t testing.TB) *Vectors {
	v, err := NewVectors([]string{"</s>", "the", "naïve", "x"}, 3, []float32{
		0, -0, 1,
		1e-30, -3.4028235e38, 0.1,
		-0.5, 2.5e-7, 123456.79,
		float32(math.SmallestNonzeroFloat32), 1, -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVectorsRoundTripTextAndBinary(t *testing.T) {
	v := sampleVectors(t)
	for _, f := range []Format{FormatText, FormatBinary} {
		for _, read := range []Format{f, FormatAuto} {
			var buf bytes.Buffer
			if err := v.Write(&buf, f); err != nil {
				t.Fatal(err)
			}
			got, err := ReadVectors(bytes.NewReader(buf.Bytes()), read)
			if err != nil {
				t.Fatalf("write %s, read %s: %v", f, read, err)
			}
			if strings.Join(got.Words, " ") != strings.Join(v.Words, " ") || got.Dim != 3 {
				t.Errorf("write %s, read %s: words %q dim %d", f, read, got.Words, got.Dim)
			}
			for i := range v.Data {
				if math.Float32bits(got.Data[i]) != math.Float32bits(v.Data[i]) {
					t.Errorf("write %s, read %s: value %d is %g, wrote %g", f, read, i, got.Data[i], v.Data[i])
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "v.bin")
	if err := v.Save(path, FormatBinary); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadVectors(path, FormatAuto); err != nil || got.Words[2] != "naïve" {
		t.Errorf("LoadVectors: %v", err)
	}
}

// word2vec's own text output ends each line with a space; its binary
// output ends each record with a newline.
func TestReadsWord2vecsOwnOutput(t *testing.T) {
	text := "2 2\n</s> 0.001 -0.002 \nthe 0.5 0.25 \n"
	v, err := ReadVectors(strings.NewReader(text), FormatAuto)
	if err != nil || v.Words[1] != "the" || v.Data[3] != 0.25 {
		t.Fatalf("text: %v %+v", err, v)
	}
	bin := []byte("1 2\nab ")
	bin = append(bin, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, '\n') // 1, -2
	v, err = ReadVectors(bytes.NewReader(bin), FormatAuto)
	if err != nil || v.Words[0] != "ab" || v.Data[0] != 1 || v.Data[1] != -2 {
		t.Fatalf("binary: %v %+v", err, v)
	}
}

func TestReadVectorsErrorsNameTheProblem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "header"},
		{"3\n", "header"},
		{"2 x\n", "dimension"},
		{"1 2\na 1\n", "line 2"},
		{"1 2\na 1 zz\n", `value "zz"`},
		{"1 2\na 1 NaN\n", "not finite"},
		{"2 2\na 1 2\n", "header says 2 vectors"},
		{"1 2\na 1 2\nb 3 4\n", "has more"},
		{"2 2\na 1 2\na 3 4\n", "twice"},
		{"1 2\nab \x00\x00", "values"},
	} {
		_, err := ReadVectors(strings.NewReader(c.in), FormatAuto)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadVectors(%q): error %v, want one mentioning %q", c.in, err, c.want)
		}
	}
	v, _ := NewVectors([]string{"a b"}, 1, []float32{1})
	if err := v.Write(&bytes.Buffer{}, FormatText); err == nil {
		t.Error("wrote a word holding a space")
	}
}

func FuzzReadVectors(f *testing.F) {
	var text, bin bytes.Buffer
	v := sampleVectors(f)
	v.Write(&text, FormatText)
	v.Write(&bin, FormatBinary)
	f.Add(text.Bytes())
	f.Add(bin.Bytes())
	f.Add([]byte("1 1\n\xff 1\n"))
	f.Add([]byte("0 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ReadVectors(bytes.NewReader(data), FormatAuto)
		if err != nil {
			return
		}
		// What was read writes back and reads again the same, both ways.
		for _, f := range []Format{FormatText, FormatBinary} {
			var buf bytes.Buffer
			if err := v.Write(&buf, f); err != nil {
				t.Fatalf("read %q but cannot write it as %s: %v", data, f, err)
			}
			got, err := ReadVectors(&buf, f)
			if err != nil {
				t.Fatalf("%s round trip of %q: %v", f, data, err)
			}
			if strings.Join(got.Words, "\n") != strings.Join(v.Words, "\n") || !equalF32(got.Data, v.Data) {
				t.Fatalf("%s round trip of %q changed the vectors", f, data)
			}
		}
	})
}

func TestCheckFiniteNamesTheWord(t *testing.T) {
	v := sampleVectors(t)
	if err := v.CheckFinite(); err != nil {
		t.Fatal(err)
	}
	v.Data[7] = float32(math.Inf(-1))
	if err := v.CheckFinite(); err == nil || !strings.Contains(err.Error(), `"naïve"`) {
		t.Errorf("CheckFinite: %v, want an error naming naïve", err)
	}
}
