package lda

import "errors"

// recount is the part of the count rebuild one GPU does for all when
// several sample one chain (multiGPU): the rows of a range of documents
// and of a range of dense words, cut by tokens, which the other GPUs then
// copy. Together the GPUs' ranges cover every document and dense word
// once; the topic totals and the sparse word rows, cheaper to count than
// to copy, each GPU still counts whole.
type recount struct {
	docs, dense unitRange // document ids, dense word ids
	// The document rows and dense units of the ranges, on the GPU.
	smallDocs, largeDocs, denseUnits gpuBuffer
	nSmallDocs, nLargeDocs, nUnits   int
}

// splitRecounts cuts the documents and the dense words into n ranges of
// about equal tokens.
func splitRecounts(l *layout, n int) []recount {
	docs := cutByCost(l.d, func(i int) float64 { return float64(l.docOff[i]) }, n)
	dense := cutByCost(l.dense, func(i int) float64 { return float64(l.wordOff[i]) }, n)
	out := make([]recount, n)
	for p := range out {
		out[p].docs, out[p].dense = docs[p], dense[p]
	}
	return out
}

// upload puts r's row lists on g: the small and large documents in its
// range and the dense units of its words.
func (r *recount) upload(g *gpuEngine) error {
	l := g.l
	in := func(rows []uint32, rg unitRange) []uint32 {
		var out []uint32
		for _, x := range rows {
			if int(x) >= rg.lo && int(x) < rg.hi {
				out = append(out, x)
			}
		}
		return out
	}
	small, large := in(l.smallDocs, r.docs), in(l.largeDocs, r.docs)
	var units []uint32
	for u := 0; u < len(l.denseUnits); u += 3 {
		if w := int(l.denseUnits[u]); w >= r.dense.lo && w < r.dense.hi {
			units = append(units, l.denseUnits[u:u+3]...)
		}
	}
	r.nSmallDocs, r.nLargeDocs, r.nUnits = len(small), len(large), len(units)/3
	return errors.Join(uploadNew(g, &r.smallDocs, small), uploadNew(g, &r.largeDocs, large), uploadNew(g, &r.denseUnits, units))
}

func (r *recount) free() error {
	var err error
	for _, b := range []*gpuBuffer{&r.smallDocs, &r.largeDocs, &r.denseUnits} {
		if *b != nil {
			err = errors.Join(err, (*b).Free())
			*b = nil
		}
	}
	return err
}

// copies are the byte ranges of g's buffers that r's owner writes and
// the other GPUs copy: its document rows and their lengths, and its dense
// word rows.
func (r *recount) copies(g *gpuEngine) []byteRange {
	l := g.l
	k := int64(l.k)
	return []byteRange{
		{g.dRow, 4 * int64(l.docOff[r.docs.lo]), 4 * int64(l.docOff[r.docs.hi]), markDocs},
		{g.dLen, 4 * int64(r.docs.lo), 4 * int64(r.docs.hi), markDocs},
		{g.wd, 4 * k * int64(r.dense.lo), 4 * k * int64(r.dense.hi), markDense},
	}
}

// byteRange is bytes [lo, hi) of a buffer, written by the time of mark.
type byteRange struct {
	buf    gpuBuffer
	lo, hi int64
	mark   int
}
