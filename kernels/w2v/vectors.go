package w2v

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Vectors are trained word vectors: row i of Data (Dim values) is Words[i].
type Vectors struct {
	Words []string
	Dim   int
	Data  []float32
	index map[string]int
}

// NewVectors wraps data (len(words)*dim values); words must be distinct.
func NewVectors(words []string, dim int, data []float32) (*Vectors, error) {
	if dim < 1 || len(data) != len(words)*dim {
		return nil, fmt.Errorf("vectors: %d values for %d words of dimension %d", len(data), len(words), dim)
	}
	v := &Vectors{Words: words, Dim: dim, Data: data, index: make(map[string]int, len(words))}
	for i, w := range words {
		if _, dup := v.index[w]; dup {
			return nil, fmt.Errorf("vectors: word %q given twice", w)
		}
		v.index[w] = i
	}
	return v, nil
}

// CheckFinite says which word, if any, has a NaN or infinite weight: what
// Hogwild training leaves when too many sentences update the same rows at
// once (a small vocabulary and large GPU batches) and it diverges.
func (v *Vectors) CheckFinite() error {
	for i, x := range v.Data {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("training diverged: word %q has weight %g (too many sentences updating the same rows at once for this vocabulary: lower batch_tokens or alpha)",
				v.Words[i/v.Dim], x)
		}
	}
	return nil
}

// Index returns w's row.
func (v *Vectors) Index(w string) (int, bool) {
	i, ok := v.index[w]
	return i, ok
}

// Row returns row i.
func (v *Vectors) Row(i int) []float32 { return v.Data[i*v.Dim : (i+1)*v.Dim] }

// Format is a vector file's format.
type Format string

const (
	FormatAuto   Format = "auto" // reading: text if the first record parses as text, else binary
	FormatText   Format = "text"
	FormatBinary Format = "binary"
)

// checkWord refuses a word that a vector file cannot hold.
func checkWord(w string) error {
	if w == "" {
		return errors.New("empty word")
	}
	if i := bytes.IndexAny([]byte(w), " \t\n\r\v\f"); i >= 0 {
		return fmt.Errorf("word %q holds whitespace", w)
	}
	return nil
}

// Write writes the vectors in word2vec's text format ("V D" then "word v1
// ... vD" per line, values in the shortest form that reads back exactly) or
// its binary format ("V D\n" then "word " and D little-endian float32 and
// "\n" per word).
func (v *Vectors) Write(w io.Writer, f Format) error {
	if f != FormatText && f != FormatBinary {
		return fmt.Errorf("vector format %q: want %s or %s", f, FormatText, FormatBinary)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%d %d\n", len(v.Words), v.Dim)
	num := make([]byte, 0, 32)
	var b4 [4]byte
	for i, word := range v.Words {
		if err := checkWord(word); err != nil {
			return fmt.Errorf("vector %d: %w", i, err)
		}
		bw.WriteString(word)
		if f == FormatBinary {
			bw.WriteByte(' ')
			for _, x := range v.Row(i) {
				binary.LittleEndian.PutUint32(b4[:], math.Float32bits(x))
				bw.Write(b4[:])
			}
		} else {
			for _, x := range v.Row(i) {
				bw.WriteByte(' ')
				bw.Write(strconv.AppendFloat(num[:0], float64(x), 'g', -1, 32))
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Save writes the vectors to path.
func (v *Vectors) Save(path string, f Format) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := v.Write(file, f); err != nil {
		file.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return file.Close()
}

// Limits on what a vector file may declare, so that a corrupt header
// cannot ask for unbounded memory before any vector is read.
const (
	maxFileDim  = 1 << 16
	maxWordLen  = 1 << 16
	maxFileRows = 1 << 28
)

// ReadVectors reads word2vec text or binary vectors (FormatAuto tells them
// apart by whether the first record parses as text). Errors name the
// record (text: its line) and what was wrong; values must be finite.
func ReadVectors(r io.Reader, f Format) (*Vectors, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.ReadString('\n')
	if err != nil && !(err == io.EOF && head != "") {
		return nil, fmt.Errorf("vectors header: %w", noEOF(err))
	}
	fields := asciiFields([]byte(head))
	if len(fields) != 2 {
		return nil, fmt.Errorf("vectors header %q: want \"count dimension\"", trim(head))
	}
	n, err1 := strconv.Atoi(string(fields[0]))
	dim, err2 := strconv.Atoi(string(fields[1]))
	if err1 != nil || err2 != nil || n < 0 || n > maxFileRows || dim < 1 || dim > maxFileDim {
		return nil, fmt.Errorf("vectors header %q: want a count (0 to %d) and a dimension (1 to %d)", trim(head), maxFileRows, maxFileDim)
	}
	if f == FormatAuto || f == "" {
		f = sniff(br, dim)
	}
	var words []string
	var data []float32
	switch f {
	case FormatText:
		words, data, err = readText(br, n, dim)
	case FormatBinary:
		words, data, err = readBinary(br, n, dim)
	default:
		return nil, fmt.Errorf("vector format %q: want %s, %s or %s", f, FormatAuto, FormatText, FormatBinary)
	}
	if err != nil {
		return nil, err
	}
	return NewVectors(words, dim, data)
}

// LoadVectors reads a vector file.
func LoadVectors(path string, f Format) (*Vectors, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	v, err := ReadVectors(file, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func trim(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return string(bytes.TrimRight([]byte(s), "\r\n"))
}

// asciiFields splits on the ASCII whitespace the corpus reader splits on.
func asciiFields(b []byte) [][]byte {
	var out [][]byte
	start := -1
	for i, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			if start >= 0 {
				out = append(out, b[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, b[start:])
	}
	return out
}

// sniff reads ahead to the first record's line end: text if it is a word
// and dim numbers (a binary record never is), or if it is printable text
// at all (a damaged text file, whose reader then says what is wrong);
// binary otherwise.
func sniff(br *bufio.Reader, dim int) Format {
	peek, _ := br.Peek(br.Size())
	if i := bytes.IndexByte(peek, '\n'); i >= 0 {
		peek = peek[:i]
	}
	f := asciiFields(peek)
	if len(f) == dim+1 {
		ok := true
		for _, x := range f[1:] {
			if _, err := strconv.ParseFloat(string(x), 32); err != nil {
				ok = false
			}
		}
		if ok {
			return FormatText
		}
	}
	if len(f) >= 2 && utf8.Valid(peek) && !bytes.ContainsFunc(peek, func(r rune) bool {
		return unicode.IsControl(r) && r != '\t' && r != '\r'
	}) {
		return FormatText
	}
	return FormatBinary
}

func checkValue(word []byte, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("word %q: value %g is not finite", word, x)
	}
	return nil
}

func readText(br *bufio.Reader, n, dim int) ([]string, []float32, error) {
	var words []string
	var data []float32
	for line := 2; len(words) < n; line++ {
		s, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, nil, fmt.Errorf("line %d: longer than %d bytes", line, br.Size())
		}
		if err != nil && (err != io.EOF || len(s) == 0) {
			return nil, nil, fmt.Errorf("line %d: header says %d vectors, found %d: %w", line, n, len(words), noEOF(err))
		}
		f := asciiFields(s)
		if len(f) == 0 {
			continue
		}
		if len(f) != dim+1 {
			return nil, nil, fmt.Errorf("line %d: want a word and %d values, got %d fields", line, dim, len(f))
		}
		for _, x := range f[1:] {
			v, err := strconv.ParseFloat(string(x), 32)
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: word %q: value %q is not a number", line, f[0], x)
			}
			if err := checkValue(f[0], v); err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", line, err)
			}
			data = append(data, float32(v))
		}
		words = append(words, string(f[0]))
	}
	if rest, _ := br.Peek(1 << 12); len(asciiFields(rest)) > 0 {
		return nil, nil, fmt.Errorf("header says %d vectors, the file has more", n)
	}
	return words, data, nil
}

func readBinary(br *bufio.Reader, n, dim int) ([]string, []float32, error) {
	var words []string
	var data []float32
	vec := make([]byte, 4*dim)
	for len(words) < n {
		// A word: bytes to a space, line ends before it skipped.
		var w []byte
		for {
			c, err := br.ReadByte()
			if err != nil {
				return nil, nil, fmt.Errorf("vector %d: header says %d vectors, found %d: %w", len(words)+1, n, len(words), noEOF(err))
			}
			if c == ' ' {
				break
			}
			if c == '\n' && len(w) == 0 {
				continue
			}
			if c == '\n' || len(w) >= maxWordLen {
				return nil, nil, fmt.Errorf("vector %d: word %q is not followed by a space", len(words)+1, trim(string(w)))
			}
			w = append(w, c)
		}
		if err := checkWord(string(w)); err != nil {
			return nil, nil, fmt.Errorf("vector %d: %w", len(words)+1, err)
		}
		if _, err := io.ReadFull(br, vec); err != nil {
			return nil, nil, fmt.Errorf("vector %d (%q): %d values: %w", len(words)+1, w, dim, noEOF(err))
		}
		for i := 0; i < dim; i++ {
			x := math.Float32frombits(binary.LittleEndian.Uint32(vec[4*i:]))
			if err := checkValue(w, float64(x)); err != nil {
				return nil, nil, fmt.Errorf("vector %d: %w", len(words)+1, err)
			}
			data = append(data, x)
		}
		words = append(words, string(w))
	}
	// word2vec ends every record with "\n"; anything else left is an error.
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return words, data, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if c != '\n' {
			return nil, nil, fmt.Errorf("header says %d vectors, the file has more", n)
		}
	}
}
