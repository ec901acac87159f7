package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

func tempPoint(measurement string, t time.Time, c float64, tags ...string) point.Point {
	p := point.New(measurement, t)
	for i := 0; i+1 < len(tags); i += 2 {
		p.AddTag(tags[i], tags[i+1])
	}
	p.AddFloat("temp_c", c)
	return p
}

func TestLatestKeepsTheWatchedTemperaturesOnly(t *testing.T) {
	l, err := NewLatest(DefaultWatch()...)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	gpu := tempPoint("gpu", now, 35, "gpu", "0", "uuid", "GPU-1", "host", "n1")
	gpu.AddFloat("mem_temp_c", 40)
	gpu.AddFloat("power_w", 70)
	batch := []point.Point{
		gpu,
		tempPoint("hwmon", now, 45.5, "chip", "platform_coretemp_0", "class", "cpu_package", "host", "n1"),
		tempPoint("hwmon", now, 30, "chip", "acpitz", "class", "acpi", "host", "n1"),
		tempPoint("hwmon", now, 33, "chip", "pci_k10", "class", "cpu", "host", "n1"),
		tempPoint("nvme", now, 38, "device", "nvme0", "sensor", "Composite", "host", "n1"),
		tempPoint("tank", now, 30, "tank", "pod"),
	}
	if err := l.Write(batch); err != nil {
		t.Fatal(err)
	}
	// The sink must not keep the collector's memory: scribble over it.
	for i := range batch {
		for j := range batch[i].Tags {
			batch[i].Tags[j].Value = "scribbled"
		}
	}
	want := map[string]float64{
		"gpu,gpu=0,uuid=GPU-1 temp_c":                             35,
		"gpu,gpu=0,uuid=GPU-1 mem_temp_c":                         40,
		"hwmon,chip=platform_coretemp_0,class=cpu_package temp_c": 45.5,
		"hwmon,chip=pci_k10,class=cpu temp_c":                     33,
		"nvme,device=nvme0,sensor=Composite temp_c":               38,
	}
	got := l.Readings()
	if len(got) != len(want) {
		t.Fatalf("readings %+v, want %v", got, want)
	}
	for _, r := range got {
		if v, ok := want[r.Series]; !ok || v != r.Value || !r.Time.Equal(now) {
			t.Errorf("reading %+v unexpected", r)
		}
		for _, tg := range r.Tags {
			if tg.Value == "scribbled" {
				t.Errorf("reading %s shares the caller's tags", r.Series)
			}
		}
	}
}

func TestLatestMeansCountEachReadingOnce(t *testing.T) {
	l, _ := NewLatest(Selector{Measurement: "gpu", Field: "temp_c"})
	t0 := time.Unix(1_700_000_000, 0)
	l.Write([]point.Point{tempPoint("gpu", t0, 90, "gpu", "0")})
	l.ResetStats() // the baseline starts here: 90 is not in it
	for i, c := range []float64{40, 42, 44} {
		p := tempPoint("gpu", t0.Add(time.Duration(i+1)*time.Second), c, "gpu", "0")
		l.Write([]point.Point{p})
		l.Write([]point.Point{p}) // the same reading again (two sinks, a retry) counts once
	}
	m := l.Means()
	if got := m["gpu,gpu=0 temp_c"]; got != 42 || len(m) != 1 {
		t.Errorf("means %v, want gpu 42", m)
	}
	l.ResetStats()
	if m := l.Means(); len(m) != 0 {
		t.Errorf("means after reset %v, want none", m)
	}
}

func TestLatestWaitTick(t *testing.T) {
	l, _ := NewLatest()
	t0 := time.Now()
	go func() {
		time.Sleep(50 * time.Millisecond)
		l.Write([]point.Point{point.New("collector_tick", t0.Add(-time.Second))})
		time.Sleep(50 * time.Millisecond)
		l.Write([]point.Point{point.New("collector_tick", t0.Add(time.Second))})
	}()
	if !l.waitTick(context.Background(), t0, 10*time.Second) {
		t.Error("the tick after t0 was not seen")
	}
	if l.waitTick(context.Background(), t0.Add(time.Hour), 100*time.Millisecond) {
		t.Error("a tick an hour ahead was seen")
	}
}
