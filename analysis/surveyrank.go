package analysis

import (
	"cmp"
	"math"
	"slices"
)

// SurveyRank places a GPU among the node's GPUs of its model. Rank 1 is
// the one to look at first: the highest thermal resistance alone (core,
// memory), the lowest throughput per watt alone. Each Z is the robust z
// against the other like GPUs, without it (their median and MAD, as the
// peer rule judges), nil where there are fewer than two others or they
// agree exactly; a positive Z is hotter per watt, a negative one on
// throughput slower per watt.
type SurveyRank struct {
	// Of is how many GPUs of its model the node has.
	Of              int      `json:"of"`
	Core            *int     `json:"core"`
	CoreZ           *float64 `json:"core_z"`
	Mem             *int     `json:"mem"`
	MemZ            *float64 `json:"mem_z"`
	ThroughputPerW  *int     `json:"throughput_per_w"`
	ThroughputPerWZ *float64 `json:"throughput_per_w_z"`
}

// rankGPUs fills every GPU's Rank among those of its model.
func rankGPUs(gs []SurveyGPU) {
	byModel := map[string][]int{}
	for i, g := range gs {
		byModel[g.Model] = append(byModel[g.Model], i)
	}
	for _, idx := range byModel {
		for _, i := range idx {
			gs[i].Rank = &SurveyRank{Of: len(idx)}
		}
		rankBy(gs, idx, func(g SurveyGPU) *float64 { return fpThermal(g.AloneCore) }, true,
			func(r *SurveyRank, rank int, z *float64) { r.Core, r.CoreZ = &rank, z })
		rankBy(gs, idx, func(g SurveyGPU) *float64 { return fpThermal(g.AloneMem) }, true,
			func(r *SurveyRank, rank int, z *float64) { r.Mem, r.MemZ = &rank, z })
		rankBy(gs, idx, func(g SurveyGPU) *float64 {
			if g.AloneCore == nil {
				return nil
			}
			return g.AloneCore.ThroughputPerW
		}, false, func(r *SurveyRank, rank int, z *float64) { r.ThroughputPerW, r.ThroughputPerWZ = &rank, z })
	}
}

func fpThermal(fp *Fingerprint) *float64 {
	if fp == nil {
		return nil
	}
	return fp.ThermalResistanceCPerW
}

// rankBy ranks the GPUs idx of gs that have a value, 1 for the highest
// (highFirst) or the lowest, and sets each one's leave-one-out robust z.
func rankBy(gs []SurveyGPU, idx []int, value func(SurveyGPU) *float64, highFirst bool, set func(*SurveyRank, int, *float64)) {
	type v struct {
		i int
		x float64
	}
	var vs []v
	for _, i := range idx {
		if p := value(gs[i]); p != nil && !math.IsNaN(*p) {
			vs = append(vs, v{i, *p})
		}
	}
	slices.SortStableFunc(vs, func(a, b v) int {
		if highFirst {
			return cmp.Compare(b.x, a.x)
		}
		return cmp.Compare(a.x, b.x)
	})
	for k, a := range vs {
		var others []float64
		for _, b := range vs {
			if b.i != a.i {
				others = append(others, b.x)
			}
		}
		var z *float64
		if len(others) >= 2 {
			med := median(others)
			if md := mad(others, med); md > 0 {
				z = ptr((a.x - med) / (madSigma * md))
			}
		}
		set(gs[a.i].Rank, k+1, z)
	}
}
