package w2v

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Planted is a synthetic corpus with structure whose ground truth is known,
// to check that training finds it:
//
//   - clusters: Clusters groups of Size words ("k3m7" is member 7 of
//     cluster 3); a cluster sentence draws each word from one cluster with
//     probability 0.6, from the background otherwise, so words of a cluster
//     share their contexts;
//   - analogies: Entities x Relations words ("e4r1"), each seen in the
//     middle of a 7-word sentence whose other words are drawn, half and
//     half, from Contexts words of its entity ("e4c0"...) and of its
//     relation ("r1c0"...), so that e_i r_j's contexts are those of e_i
//     plus those of r_j, and e_i r_1 - e_i r_0 + e_k r_0 should be e_k r_1;
//   - background: Noise words of Zipfian frequency (s=1), also making up
//     noise sentences.
//
// Cluster, analogy and noise sentences take 40, 40 and 20 percent of the
// Tokens. With Shuffle every token is moved to a random place in the
// corpus (sentence lengths kept): the counts stay, the structure goes, the
// negative control.
type Planted struct {
	Clusters, Size                int
	Entities, Relations, Contexts int
	Noise                         int
	Tokens                        int64
	Shuffle                       bool
	Seed                          uint64
}

// ParsePlanted reads "planted:clusters=C,size=S,entities=E,relations=R,
// contexts=X,noise=N,tokens=T,shuffle=B,seed=X" (each optional).
func ParsePlanted(spec string) (Planted, error) {
	m, err := specValues(spec, PlantedPrefix, "clusters", "size", "entities", "relations", "contexts", "noise", "tokens", "shuffle", "seed")
	if err != nil {
		return Planted{}, err
	}
	r := &specReader{spec: spec, m: m}
	p := Planted{
		Clusters:  int(r.count("clusters", 10, 0, 10000)),
		Size:      int(r.count("size", 8, 2, 10000)),
		Entities:  int(r.count("entities", 10, 0, 10000)),
		Relations: int(r.count("relations", 3, 2, 100)),
		Contexts:  int(r.count("contexts", 4, 1, 1000)),
		Noise:     int(r.count("noise", 1000, 1, 1<<24)),
		Tokens:    r.count("tokens", 500000, 1000, 1<<32),
		Shuffle:   r.bool("shuffle"),
		Seed:      uint64(r.count("seed", 1, 0, 1<<62)),
	}
	if r.err != nil {
		return Planted{}, r.err
	}
	if p.Entities == 1 {
		return Planted{}, fmt.Errorf("corpus %q: entities=1 makes no analogy: want 0 or at least 2", spec)
	}
	return p, nil
}

// Truth is a planted corpus's ground truth.
type Truth struct {
	Clusters  [][]string
	Analogies []Question // e_i r_j : e_i r_l :: e_k r_j : e_k r_l for i != k, j != l
}

func clusterWord(c, m int) string     { return "k" + strconv.Itoa(c) + "m" + strconv.Itoa(m) }
func analogyWord(e, r int) string     { return "e" + strconv.Itoa(e) + "r" + strconv.Itoa(r) }
func entityContext(e, m int) string   { return "e" + strconv.Itoa(e) + "c" + strconv.Itoa(m) }
func relationContext(r, m int) string { return "r" + strconv.Itoa(r) + "c" + strconv.Itoa(m) }

// Truth lists what the corpus plants.
func (p Planted) Truth() *Truth {
	t := &Truth{}
	for c := 0; c < p.Clusters; c++ {
		var ws []string
		for m := 0; m < p.Size; m++ {
			ws = append(ws, clusterWord(c, m))
		}
		t.Clusters = append(t.Clusters, ws)
	}
	for i := 0; i < p.Entities; i++ {
		for k := 0; k < p.Entities; k++ {
			for j := 0; j < p.Relations; j++ {
				for l := 0; l < p.Relations; l++ {
					if i != k && j != l {
						t.Analogies = append(t.Analogies, Question{analogyWord(i, j), analogyWord(i, l), analogyWord(k, j), analogyWord(k, l)})
					}
				}
			}
		}
	}
	return t
}

// Generate makes the corpus, its sentences cut at maxSentence.
func (p Planted) Generate(maxSentence int) (*Corpus, error) {
	rng := rand.New(rand.NewPCG(p.Seed, 0x706c616e74))
	var names []string
	add := func(w string) int32 { names = append(names, w); return int32(len(names) - 1) }
	noise := make([]int32, p.Noise)
	for r := range noise {
		noise[r] = add("n" + strconv.Itoa(r+1))
	}
	// Zipf's law over the background by inverse transform of its CDF.
	cdf := make([]float64, p.Noise)
	var h float64
	for r := range cdf {
		h += 1 / float64(r+1)
		cdf[r] = h
	}
	pickNoise := func() int32 {
		u := rng.Float64() * h
		lo, hi := 0, len(cdf)-1
		for lo < hi {
			mid := (lo + hi) / 2
			if cdf[mid] < u {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		return noise[lo]
	}
	cluster := make([][]int32, p.Clusters)
	for c := range cluster {
		for m := 0; m < p.Size; m++ {
			cluster[c] = append(cluster[c], add(clusterWord(c, m)))
		}
	}
	grid := make([][]int32, p.Entities)
	ectx := make([][]int32, p.Entities)
	rctx := make([][]int32, p.Relations)
	for e := range grid {
		for r := 0; r < p.Relations; r++ {
			grid[e] = append(grid[e], add(analogyWord(e, r)))
		}
		for m := 0; m < p.Contexts; m++ {
			ectx[e] = append(ectx[e], add(entityContext(e, m)))
		}
	}
	for r := range rctx {
		for m := 0; m < p.Contexts; m++ {
			rctx[r] = append(rctx[r], add(relationContext(r, m)))
		}
	}
	var sentences [][]int32
	var n int64
	for n < p.Tokens {
		var s []int32
		u := rng.Float64()
		switch {
		case u < 0.4 && p.Clusters > 0:
			c := cluster[rng.IntN(p.Clusters)]
			for len(s) < 12 {
				if rng.Float64() < 0.6 {
					s = append(s, c[rng.IntN(len(c))])
				} else {
					s = append(s, pickNoise())
				}
			}
		case u < 0.8 && p.Entities > 0:
			e, r := rng.IntN(p.Entities), rng.IntN(p.Relations)
			for k := 0; k < 7; k++ {
				switch {
				case k == 3:
					s = append(s, grid[e][r])
				case rng.IntN(2) == 0:
					s = append(s, ectx[e][rng.IntN(p.Contexts)])
				default:
					s = append(s, rctx[r][rng.IntN(p.Contexts)])
				}
			}
		default:
			for len(s) < 12 {
				s = append(s, pickNoise())
			}
		}
		sentences = append(sentences, s)
		n += int64(len(s))
	}
	if p.Shuffle {
		var all []int32
		for _, s := range sentences {
			all = append(all, s...)
		}
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for _, s := range sentences {
			all = all[copy(s, all):]
		}
	}
	// Ids by the vocabulary's order (count, then name).
	counts := map[string]int64{}
	for _, s := range sentences {
		for _, id := range s {
			counts[names[id]]++
		}
	}
	v := NewVocab(counts, 1, 0)
	remap := make([]int32, len(names))
	for i, w := range names {
		remap[i], _ = v.ID(w)
	}
	for _, s := range sentences {
		for k, id := range s {
			s[k] = remap[id]
		}
	}
	return NewCorpus(v, sentences, maxSentence)
}

// PlantedScore is how much of a planted corpus's structure vectors show.
type PlantedScore struct {
	// ClusterPurity is the fraction of clustered words whose nearest other
	// clustered word (by cosine) is of its own cluster; ClusterChance is
	// its expectation for random vectors.
	ClusterPurity, ClusterChance float64
	ClusterWords                 int // clustered words with vectors
	Analogy                      AnalogyScore
	// AnalogyChance is a random answer's accuracy: one of the other words.
	AnalogyChance float64
}

// Score measures vectors against the truth.
func (t *Truth) Score(v *Vectors, threads int) PlantedScore {
	var s PlantedScore
	type cw struct{ row, cluster int }
	var ws []cw
	for c, members := range t.Clusters {
		for _, w := range members {
			if i, ok := v.Index(w); ok {
				ws = append(ws, cw{i, c})
			}
		}
	}
	s.ClusterWords = len(ws)
	if len(ws) > 1 {
		unit := v.Unit()
		row := func(i int) []float32 { return unit[i*v.Dim : (i+1)*v.Dim] }
		same, chance := 0, 0.0
		size := map[int]int{}
		for _, w := range ws {
			size[w.cluster]++
		}
		for a, wa := range ws {
			best, bestCos := -1, 0.0
			for b, wb := range ws {
				if a == b {
					continue
				}
				c := cosine(row(wa.row), row(wb.row))
				if best < 0 || c > bestCos {
					best, bestCos = b, c
				}
			}
			if ws[best].cluster == wa.cluster {
				same++
			}
			chance += float64(size[wa.cluster]-1) / float64(len(ws)-1)
		}
		s.ClusterPurity = float64(same) / float64(len(ws))
		s.ClusterChance = chance / float64(len(ws))
	}
	if len(t.Analogies) > 0 {
		s.Analogy = v.Analogies(t.Analogies, threads)
		if len(v.Words) > 3 {
			s.AnalogyChance = 1 / float64(len(v.Words)-3)
		}
	}
	return s
}
