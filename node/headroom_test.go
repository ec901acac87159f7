package node_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/node"
)

// The option is off unless asked for; asked for, it is decoded strictly
// and checked, an error naming the key.
func TestHeadroomSection(t *testing.T) {
	for _, c := range []struct {
		name, yaml, err string
		enabled         bool
		hold            time.Duration
	}{
		{"off by default", "host: n1\n", "", false, time.Minute},
		{"on, with its own hold", "sinks:\n  slurm_headroom: {enabled: true, node: n1, hold: 2m}\n", "", true, 2 * time.Minute},
		{"unknown key", "sinks:\n  slurm_headroom: {enabled: true, wieght: 3}\n", "wieght", false, 0},
		{"hotter band weighing less", "sinks:\n  slurm_headroom:\n    enabled: true\n    levels: [{min_headroom_c: 20, weight: 5}, {min_headroom_c: 0, weight: 1}]\n", "levels[1].weight", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := configs.Parse("heatsink.yaml", []byte(c.yaml))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			h := node.HeadroomOf(cfg)
			if h.Enabled != c.enabled || h.Hold != c.hold || len(h.Levels) != 4 {
				t.Errorf("section %+v", *h)
			}
		})
	}
}
