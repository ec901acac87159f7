//go:build heatsink_probe

package analysis

import "fmt"

// The probe analysis: what adding an analysis takes, one file that
// registers itself (cmd/heatsink's TestAddingAnAnalysisTakesOneFile builds
// heatsink with -tags heatsink_probe). It names the hottest component of
// each kind.

// probeHottest is the hottest component of one kind.
type probeHottest struct {
	Kind      string   `json:"kind"`
	Component string   `json:"component"`
	MaxC      *float64 `json:"max_c"`
}

type probeResult struct {
	Hottest []probeHottest `json:"hottest"`
}

func init() {
	Register(Extension{
		Name:        "probe_hottest",
		Order:       1000,
		Title:       "Hottest component of each kind (probe)",
		Definitions: []Definition{{"probe_hottest", "per kind of component, the one whose max_c is highest"}},
		Analyze: func(in Input) (any, string) {
			res := &probeResult{}
			at := map[string]int{}
			for _, c := range in.Components {
				if c.MaxC == nil {
					continue
				}
				i, seen := at[c.Kind]
				switch {
				case !seen:
					at[c.Kind] = len(res.Hottest)
					res.Hottest = append(res.Hottest, probeHottest{c.Kind, c.ID, c.MaxC})
				case *c.MaxC > *res.Hottest[i].MaxC:
					res.Hottest[i] = probeHottest{c.Kind, c.ID, c.MaxC}
				}
			}
			if len(res.Hottest) == 0 {
				return nil, "no component has a maximum"
			}
			return res, ""
		},
		Render: func(r any) Section {
			s := Section{Head: []string{"kind", "component", "max °C"}}
			for _, h := range r.(*probeResult).Hottest {
				s.Rows = append(s.Rows, []string{h.Kind, h.Component, fmt.Sprintf("%.1f", *h.MaxC)})
			}
			return s
		},
	})
}
