package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/configs"
)

// Surveys published to a real InfluxDB (influxd on loopback) come back by
// UUID as each GPU's last survey: after two surveys of the real 4×H100
// node, the second one's values, and a GPU no survey has seen finds none.
func TestSurveyAgainstInfluxIsEachGPUsLastSurvey(t *testing.T) {
	db := influxtest.Start(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "heatsink.yaml")
	os.WriteFile(conf, fmt.Appendf(nil, "sinks:\n  influx: {url: %s, bucket: %s, spool_dir: %s}\n", db.URL(), influxtest.Bucket, filepath.Join(dir, "spool")), 0o644)
	cfg, err := configs.Load(conf)
	if err != nil {
		t.Fatal(err)
	}
	first, err := analysis.ReadSurvey(filepath.Join("testdata", "survey-h100x4"))
	if err != nil {
		t.Fatal(err)
	}
	second := first
	second.RunID = "second"
	second.GPUs = append([]analysis.SurveyGPU(nil), first.GPUs...)
	worse := *second.GPUs[0].AloneCore
	worse.ThermalResistanceCPerW = ptrTo(*worse.ThermalResistanceCPerW * 1.2)
	second.GPUs[0].AloneCore = &worse
	ctx := context.Background()
	for i, s := range []analysis.Survey{first, second} {
		if err := publishSurvey(ctx, cfg, filepath.Join(dir, fmt.Sprint(i)), s); err != nil {
			t.Fatal(err)
		}
	}
	a, err := newSurveyAgainst("influx", cfg)
	if err != nil {
		t.Fatal(err)
	}
	uuids := []string{first.GPUs[0].UUID, first.GPUs[3].UUID}
	got, why, err := a.earlier(ctx, uuids)
	if err != nil || got == nil {
		t.Fatalf("earlier: %v, %s", err, why)
	}
	if len(got.GPUs) != 2 || got.RunID != "second" {
		t.Fatalf("%d GPUs of runs %q, want GPUs 0 and 3 of the second survey", len(got.GPUs), got.RunID)
	}
	byUUID := map[string]analysis.SurveyGPU{}
	for _, g := range got.GPUs {
		byUUID[g.UUID] = g
	}
	if v := *byUUID[uuids[0]].AloneCore.ThermalResistanceCPerW; v != *worse.ThermalResistanceCPerW {
		t.Errorf("GPU 0 came back at %.5f °C/W, want the second survey's %.5f", v, *worse.ThermalResistanceCPerW)
	}
	if g := byUUID[uuids[1]]; g.Index != "3" || g.Rank == nil || *g.Rank.Core != *first.GPUs[3].Rank.Core {
		t.Errorf("GPU 3 came back as %+v", g)
	}
	none, why, err := a.earlier(ctx, []string{"GPU-00000000-0000-0000-0000-000000000000"})
	if none != nil || err != nil || !strings.Contains(why, "no earlier survey of these GPUs' UUIDs in InfluxDB "+db.URL()) {
		t.Errorf("an unknown UUID: %v, %v, %q", none, err, why)
	}
	if _, err := newSurveyAgainst("influx", configs.Default()); err == nil || !strings.Contains(err.Error(), "--against influx: no InfluxDB configured") {
		t.Errorf("--against influx without sinks.influx: %v", err)
	}
}

func ptrTo(v float64) *float64 { return &v }
