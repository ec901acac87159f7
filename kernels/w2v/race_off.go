//go:build !race

package w2v

// rowLoad copies row i of a V x d matrix into dst.
//
// Trainers on many goroutines read and update rows that others are writing,
// without locks, as word2vec's threads do (Hogwild): a lost update now and
// then costs nothing measurable in quality, and locks or atomics would cost
// much of the speed. Under the race detector, race_on.go does the same
// with atomic loads and a compare-and-swap add, so that tests of the
// concurrent trainer can run with -race.
func rowLoad(dst, m []float32, i, d int) {
	copy(dst, m[i*d:i*d+d])
}

// rowAddDelta adds (cur - orig), element by element rounded to float32, to
// row i of m: the write-back of a private copy.
func rowAddDelta(m []float32, i, d int, cur, orig []float32) {
	row := m[i*d : i*d+d]
	cur, orig = cur[:len(row)], orig[:len(row)]
	for e := range row {
		row[e] += cur[e] - orig[e]
	}
}

// raceBuild says the race detector is on (see race_on.go).
const raceBuild = false

// rowAxpy adds g*x, element by element rounded to float32, to row i of m:
// word2vec's in-place update of an output row.
func rowAxpy(m []float32, i, d int, g float32, x []float32) {
	row := m[i*d : i*d+d]
	x = x[:len(row)]
	for e := range row {
		row[e] += float32(g * x[e])
	}
}

// rowAdd adds x to row i of m.
func rowAdd(m []float32, i, d int, x []float32) {
	row := m[i*d : i*d+d]
	x = x[:len(row)]
	for e := range row {
		row[e] += x[e]
	}
}
