package hold

import (
	"math"
	"time"

	"github.com/heatsink-hpc/heatsink/sensors/tank/sim"
)

// tankPlant is tank-sim's coolant (sensors/tank/sim) with the job as its IT
// load: LoadW while the job runs. The tank integrates in its own steps, so
// the time the job ran is collected and applied as the mean load over each
// whole step.
type tankPlant struct {
	m              *sim.Model
	loadW          float64
	pendS, pendOnS float64
}

func newTankPlant(loadW float64, seed uint64) *tankPlant {
	p := sim.DefaultParams()
	p.WaterInC = 30 // a summer's chilled water: the tank cannot take the full load
	m, err := sim.New(p, seed)
	if err != nil {
		panic(err)
	}
	return &tankPlant{m: m, loadW: loadW}
}

func (t *tankPlant) Advance(dtS float64, on bool) {
	t.pendS += dtS
	if on {
		t.pendOnS += dtS
	}
	step := 0.5
	if n := math.Floor(t.pendS/step + 1e-9); n >= 1 {
		d := n * step
		share := math.Min(1, t.pendOnS/t.pendS)
		if err := t.m.SetLoad(t.loadW * share); err != nil {
			panic(err)
		}
		t.m.Advance(time.Duration(d * float64(time.Second)))
		t.pendS -= d
		t.pendOnS = math.Max(0, t.pendOnS-share*d)
	}
}

func (t *tankPlant) TempC() float64 { return t.m.Truth().CoolantC }

// tankModel is the tank's response to a 20 kW job with its pumps running
// and summer water (30 °C): the heat exchanger's ε·C_min (956 W/K) and the
// walls' 15 W/K against its 1.1 MJ/K, worked out from sim.DefaultParams as
// an earlier free run's fit would find them.
func tankModel() Model {
	p := sim.DefaultParams()
	cc := float64(p.Pumps) * p.PumpFlowLpm / 60000 * p.DensityKgM3 * p.SpecificHeatJKgK
	cw := p.WaterFlowLpm / 60000 * 1000 * 4186
	cmin, cmax := math.Min(cc, cw), math.Max(cc, cw)
	cr, ntu := cmin/cmax, p.UAWK/cmin
	eps := (1 - math.Exp(-ntu*(1-cr))) / (1 - cr*math.Exp(-ntu*(1-cr)))
	k := eps*cmin + p.AmbientUAWK
	pump := p.PumpHeatFraction * float64(p.Pumps) * p.PumpPowerW
	base := (pump + eps*cmin*30 + p.AmbientUAWK*p.AmbientC) / k
	return Model{BaseC: base, SlowC: 20000 / k, TauS: p.HeatCapacity() / k, Source: "sim: tank-sim, 30 °C water"}
}
