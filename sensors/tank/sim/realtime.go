package sim

import "math"

// RealTime is the body of GET /api/realTime, in the shape and key order of
// a Submer SmartPod v3 (sensors/tank/testdata/submer_realtime.json).
type RealTime struct {
	Meta []any        `json:"meta"`
	Data RealTimeData `json:"data"`
}

// RealTimeData is the pod's "data" object; the fixture README gives the
// meaning and unit of each key.
type RealTimeData struct {
	Temperature  float64  `json:"temperature"`
	Setpoint     float64  `json:"setpoint"`
	Consumption  float64  `json:"consumption"`
	Dissipation  float64  `json:"dissipation"`
	DissipationC float64  `json:"dissipationC"`
	DissipationW float64  `json:"dissipationW"`
	MPUE         float64  `json:"mpue"`
	Pump1Status  int      `json:"pump1status"`
	Pump1RPM     float64  `json:"pump1rpm"`
	Pump2Status  int      `json:"pump2status"`
	Pump2RPM     float64  `json:"pump2rpm"`
	CTI          float64  `json:"cti"`
	CTO          float64  `json:"cto"`
	CF           float64  `json:"cf"`
	WTI          float64  `json:"wti"`
	WTO          float64  `json:"wto"`
	WF           float64  `json:"wf"`
	Alarm        float64  `json:"alarm"`
	CPU0Temp     float64  `json:"cpu0temp"`
	CPU1Temp     float64  `json:"cpu1temp"`
	Errors       []string `json:"errors"`
	Warnings     []string `json:"warnings"`
	Mode         string   `json:"mode"`
	Test         *bool    `json:"test"`
	Maintenance  *bool    `json:"maintenance"`
	Demo         bool     `json:"demo"`
	Factory      bool     `json:"factory"`
}

// RealTime returns what the pod's controller shows now. Pump status, speed,
// coolant flow and consumption follow the controller's command, not the
// pumps' real state: in demo mode they look normal while nothing flows.
// Dissipation is measured on the water side, C_w·(T_w,out − T_w,in), as the
// pod does.
func (m *Model) RealTime() RealTime {
	cmd := m.commanded() && m.p.Pumps > 0
	d := RealTimeData{
		Temperature: round(m.temp+m.noise, 1),
		Setpoint:    m.setpoint,
		Consumption: math.Round(m.consumption(cmd)),
		CTI:         round(m.cti, 1), CTO: round(m.cto, 1),
		WTI: round(m.wti, 1), WTO: round(m.wto, 1),
		Alarm:    m.p.AlarmC,
		CPU0Temp: math.Round(m.cpu0), CPU1Temp: math.Round(m.cpu1),
		Errors: []string{}, Warnings: []string{},
		Mode: m.mode, Demo: m.demo,
	}
	if cmd {
		rpm := math.Round(m.p.PumpRPM * (1 + m.noiseRPM))
		d.Pump1Status, d.Pump1RPM = 1, rpm
		if m.p.Pumps > 1 {
			d.Pump2Status, d.Pump2RPM = 1, rpm
		}
		d.CF = round(float64(m.p.Pumps)*m.p.PumpFlowLpm*(1+m.noiseFlow), 1)
	}
	if m.waterConnected {
		lpm := m.p.WaterFlowLpm * (1 + m.noiseFlow)
		if m.p.WaterFlowUnit == "m3/h" {
			d.WF = round(lpm*60/1000, 2)
		} else {
			d.WF = round(lpm, 1)
		}
		cw := m.p.WaterFlowLpm / 60000 * waterDensity * waterSpecificHeat
		dw := m.wto - m.wti
		d.DissipationW = math.Round(cw * dw)
		d.DissipationC = round(dw, 1)
		d.Dissipation = round(d.DissipationW/1000, 2)
	} else {
		d.Warnings = append(d.Warnings, "No facility water flow")
	}
	d.MPUE = 1
	if d.DissipationW > 0 {
		d.MPUE = round((d.DissipationW+d.Consumption)/d.DissipationW, 2)
	}
	if m.temp >= m.p.AlarmC {
		d.Errors = append(d.Errors, "Coolant temperature above alarm threshold")
	}
	return RealTime{Meta: []any{}, Data: d}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
