package slurm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// gpuTicks are a node's readings at t: GPU 0 at tempC, GPU 1 5 °C
// cooler, both with a slowdown limit of 92 °C (an H100's is 87-92 °C).
func gpuTicks(t time.Time, tempC float64) []point.Point {
	var ps []point.Point
	for i, c := range []float64{tempC, tempC - 5} {
		p := point.New(schema.GPU, t)
		p.AddTag(schema.TagGPU, fmt.Sprint(i)).AddTag(schema.TagUUID, fmt.Sprintf("GPU-%d", i))
		p.AddFloat(schema.FieldTempC, c).AddFloat(schema.FieldPowerW, 90).AddFloat(schema.FieldSlowdownC, 92)
		ps = append(ps, p)
	}
	return ps
}

// submitOneAtATime submits n single-node jobs, each once the one before
// it runs, and returns the node each landed on.
func submitOneAtATime(t *testing.T, ctx context.Context, c *slurmtest.Cluster, n int) []string {
	t.Helper()
	var nodes []string
	for range n {
		out, err := c.Client.Run(ctx, "sbatch", "--parsable", "--nodes=1", "--ntasks=1", "--output=/dev/null", "--wrap=sleep 600")
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
		deadline := time.Now().Add(30 * time.Second)
		for {
			out, err := c.Client.Run(ctx, "squeue", "--noheader", "--jobs="+id, "--format=%T %N")
			f := strings.Fields(string(out))
			if err == nil && len(f) == 2 && f[0] == "RUNNING" {
				nodes = append(nodes, f[1])
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s not running after 30 s: %q %v", id, out, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nodes
}

func cancelAll(t *testing.T, ctx context.Context, c *slurmtest.Cluster) {
	t.Helper()
	if _, err := c.Client.Run(ctx, "scancel", "--user=root"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitIdle(60 * time.Second); err != nil {
		t.Fatal(err)
	}
}

func weightOf(t *testing.T, ctx context.Context, c *slurmtest.Cluster, node string) string {
	t.Helper()
	n, err := c.Client.Node(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	return n.Weight
}

// Three nodes whose hottest GPUs run at 80, 65 and 50 °C (n1, n2, n3):
// without the option Slurm fills them in its own order (by name, at equal
// weight), with it coolest first; a band changes only past the margin and
// after the hold; a node an admin drained keeps its state and its weight.
func TestHeadroomWeightsOnRealSlurm(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{Nodes: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	temps := map[string]float64{"n1": 80, "n2": 65, "n3": 50}

	if got := strings.Join(submitOneAtATime(t, ctx, c, 3), ","); got != "n1,n2,n3" {
		t.Errorf("without the option, jobs landed on %s, want Slurm's order n1,n2,n3", got)
	}
	cancelAll(t, ctx, c)

	cfg := slurm.DefaultHeadroomConfig()
	cfg.Enabled = true
	hs := map[string]*slurm.Headroom{}
	t0 := time.Now()
	for _, n := range c.Nodes {
		cfg.Node = n
		h, err := slurm.NewHeadroom(c.Client, cfg)
		if err != nil {
			t.Fatal(err)
		}
		hs[n] = h
		h.Observe(gpuTicks(t0, temps[n]))
		if out, err := h.Step(ctx, t0); err != nil || out.Action != "holding" {
			t.Fatalf("%s at the first step: %+v %v, want holding for %v", n, out, err, cfg.Hold)
		}
		h.Observe(gpuTicks(t0.Add(cfg.Hold), temps[n]))
		out, err := h.Step(ctx, t0.Add(cfg.Hold))
		// n3's band has weight 1, slurm.conf's already: nothing to set.
		if want := map[bool]string{true: "steady", false: "set"}[n == "n3"]; err != nil || out.Action != want {
			t.Fatalf("%s after the hold: %+v %v, want %s", n, out, err, want)
		}
		t.Logf("%s: hottest GPU %.0f °C, headroom %.0f °C (%s), weight %d", n, temps[n], *out.HeadroomC, out.From, out.Weight)
	}
	for n, want := range map[string]string{"n1": "3", "n2": "2", "n3": "1"} {
		if got := weightOf(t, ctx, c, n); got != want {
			t.Errorf("%s: weight %s, want %s", n, got, want)
		}
	}
	if got := strings.Join(submitOneAtATime(t, ctx, c, 3), ","); got != "n3,n2,n1" {
		t.Errorf("with the option, jobs landed on %s, want coolest first n3,n2,n1", got)
	}
	cancelAll(t, ctx, c)

	t.Run("a band changes past the margin, after the hold", func(t *testing.T) {
		h := hs["n1"] // weight 3: headroom 12 °C, band [10, 20)
		at := t0.Add(2 * cfg.Hold)
		step := func(dt time.Duration, tempC float64, action, weight string) {
			t.Helper()
			h.Observe(gpuTicks(at.Add(dt), tempC))
			out, err := h.Step(ctx, at.Add(dt))
			if err != nil || out.Action != action {
				t.Fatalf("at +%v, %.0f °C: %+v %v, want %s", dt, tempC, out, err, action)
			}
			if got := weightOf(t, ctx, c, "n1"); got != weight {
				t.Fatalf("at +%v, %.0f °C: weight %s, want %s", dt, tempC, got, weight)
			}
		}
		// 83 °C is 9 °C of headroom: under the band's edge by less than
		// the 2 °C margin, however long.
		step(0, 83, "steady", "3")
		step(10*cfg.Hold, 83, "steady", "3")
		// 85 °C (7 °C) is past it: the next band, once it held a minute.
		step(11*cfg.Hold, 85, "holding", "3")
		step(11*cfg.Hold+cfg.Hold/2, 85, "holding", "3")
		step(12*cfg.Hold, 85, "set", "4")
	})

	t.Run("a drained node keeps its state, reason and weight", func(t *testing.T) {
		if _, err := c.Client.Run(ctx, "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=admin: fan swap"); err != nil {
			t.Fatal(err)
		}
		defer c.Client.Resume(context.Background(), "n2")
		h := hs["n2"]
		at := t0.Add(20 * cfg.Hold)
		for _, dt := range []time.Duration{0, cfg.Hold, 2 * cfg.Hold} {
			h.Observe(gpuTicks(at.Add(dt), 88)) // 4 °C: the hottest band
			out, err := h.Step(ctx, at.Add(dt))
			if err != nil {
				t.Fatal(err)
			}
			if dt > 0 && out.Action != "left_alone" {
				t.Errorf("at +%v: %+v, want left_alone", dt, out)
			}
		}
		n, err := c.Client.Node(ctx, "n2")
		if err != nil {
			t.Fatal(err)
		}
		if !n.Drained() || n.Reason != "admin: fan swap" || n.Weight != "2" {
			t.Errorf("n2 after the steps: state %s reason %q weight %s, want drained, the admin's reason, weight 2", n.State, n.Reason, n.Weight)
		}
	})
}
