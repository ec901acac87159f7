package analysis

import (
	"math"
	"testing"
)

func TestActiveIntervalsEdges(t *testing.T) {
	tt := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	v := []float64{900, 900, 0, 0, 1200, math.NaN(), 1200, 0, 0, 800}
	got := ActiveIntervals(tt, v, 0)
	want := []Interval{
		{Start: 0, End: 2, StartSeen: false, EndSeen: true}, // running when the recording began
		{Start: 4, End: 7, StartSeen: true, EndSeen: true},  // the NaN at 5 changes nothing
		{Start: 9, End: 9, StartSeen: true, EndSeen: false}, // still running at the end
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cycle %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !got[1].Complete() || got[0].Complete() || got[2].Complete() {
		t.Error("Complete() wrong")
	}
}

func TestAnyAboveAndFlowHeat(t *testing.T) {
	got := AnyAbove([]float64{0, 1000, math.NaN(), math.NaN()}, []float64{0, 0, 800, math.NaN()})
	if got[0] != 0 || got[1] != 1000 || got[2] != 800 || !math.IsNaN(got[3]) {
		t.Errorf("AnyAbove = %v", got)
	}
	// 20 L/min of water warming by 3 °C carries 20·3·0.998·4.186/60 kW.
	kw := FlowHeatKW([]float64{20}, []float64{3}, WaterDensityKgPerL, WaterHeatCapacityKJPerKgK)
	near(t, "water heat", kw[0], 20*3*0.998*4.186/60, 1e-12)
	if m, ok := OffMean([]float64{50, 350, 52, 350}, []float64{0, 1, 0, 1}, 0); !ok || m != 51 {
		t.Errorf("OffMean = %v, %v, want 51", m, ok)
	}
	if _, ok := OffMean([]float64{350}, []float64{1}, 0); ok {
		t.Error("OffMean with the pumps always running claims a value")
	}
}
