package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The blind spot planted in a real recording: `heatsink run` reads a tank
// served by a real `heatsink tank-sim` process and an Intel node's sysfs
// tree (sensors/testdata/intel-node, coretemp max_c 84 °C) whose core
// temperatures the test drives up 45 °C with τ 8 s through the load, as a
// CPU under a heavy job does, while 3 kW more go into the 250 L tank. The
// cores come within 5 °C of their limit some 16 s into the load; the
// coolant cannot move 0.5 °C in 30 s. The report must say so in its first
// sentence and in blind_spot.
func TestReportStatesThePlantedBlindSpotOfATankSimRun(t *testing.T) {
	if testing.Short() {
		t.Skip("records for a minute")
	}
	sys := filepath.Join(t.TempDir(), "sys")
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", "sensors", "testdata", "intel-node", "sys"), sys).CombinedOutput(); err != nil {
		t.Fatalf("copy the sysfs fixture: %v: %s", err, out)
	}
	tankURL := startTankSim(t, "--load-w", "800", "--initial-c", "30", "--setpoint-c", "35")
	cfg := filepath.Join(t.TempDir(), "tank.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("sources:\n  tanks:\n    - name: pod1\n      url: %s\n", tankURL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cores, _ := filepath.Glob(filepath.Join(sys, "class", "hwmon", "hwmon1", "temp*_input"))
	if len(cores) == 0 {
		t.Fatal("no coretemp inputs in the fixture")
	}
	// set writes every core sensor in place: the hwmon source keeps each
	// file open and reads it again (one pread), as it must on a real
	// kernel, so a renamed new file would never be seen. Between 10 and
	// 99 °C the value is always five digits and a newline, so an
	// overwrite without truncation is never read half written.
	set := func(c float64) {
		for _, name := range cores {
			f, err := os.OpenFile(name, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := f.WriteAt([]byte(fmt.Sprintf("%05d\n", int(c*1000))), 0); err != nil {
				t.Error(err)
			}
			f.Close()
		}
	}
	set(40)
	const baselineS, loadS = 12, 30
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(heatsinkBinary(t), "run", "--config", cfg, "--sysfs-root", sys, "--baseline", fmt.Sprintf("%ds", baselineS),
		"--cooldown", "15s", "--out", dir, "--", "sleep", fmt.Sprint(loadS))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	loaded := false
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			break wait
		case <-tick.C:
			x := time.Since(start).Seconds() - baselineS
			switch {
			case x < 0:
			case x < loadS:
				if !loaded {
					loaded = true
					resp, err := http.Post(tankURL+"/sim/control", "application/json", strings.NewReader(`{"load_w": 3800}`))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				set(40 + 45*(1-math.Exp(-x/8)))
			default:
				set(40 + 45*(1-math.Exp(-loadS/8.0))*math.Exp(-(x-loadS)/6))
			}
		}
	}

	js, stderr, err := heatsink(t, "report", dir, "--format", "json")
	if err != nil {
		t.Fatalf("report: %v: %s", err, stderr)
	}
	var rep struct {
		Run       struct{ Cooling string } `json:"run"`
		BlindSpot []struct {
			Component       string   `json:"component"`
			RiseC           float64  `json:"rise_c"`
			CoolantRiseC    float64  `json:"coolant_rise_c"`
			FromS           float64  `json:"from_s"`
			NearLimitAtS    *float64 `json:"near_limit_at_s"`
			CoolantMovedAtS *float64 `json:"coolant_moved_at_s"`
			Limit           *struct {
				Field string  `json:"field"`
				C     float64 `json:"c"`
			} `json:"limit"`
		} `json:"blind_spot"`
		NotComputed map[string]string `json:"not_computed"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Run.Cooling != "immersion" {
		t.Errorf("cooling %q, want immersion (the tank is recorded)", rep.Run.Cooling)
	}
	if len(rep.BlindSpot) == 0 {
		t.Fatalf("no blind spot: %s", rep.NotComputed["blind_spot"])
	}
	b := rep.BlindSpot[0]
	if !strings.HasPrefix(b.Component, "cpu:") || b.Limit == nil || b.Limit.Field != "max_c" || b.Limit.C != 84 {
		t.Errorf("blind spot of %s against limit %+v; want the coretemp chip against its max_c 84 °C", b.Component, b.Limit)
	}
	if b.RiseC < 35 || b.CoolantRiseC > 0.5 {
		t.Errorf("rise %.1f °C against the coolant's %.2f °C; want about 44 against under 0.5", b.RiseC, b.CoolantRiseC)
	}
	if b.NearLimitAtS == nil || *b.NearLimitAtS-b.FromS < 10 || *b.NearLimitAtS-b.FromS > 25 {
		t.Errorf("near limit at %v (load from %.0f s); want about 16 s into the load", b.NearLimitAtS, b.FromS)
	}
	if b.CoolantMovedAtS != nil {
		t.Errorf("coolant moved at %.0f s; 3.8 kW cannot move 250 L of oil 0.5 °C in 30 s", *b.CoolantMovedAtS)
	}
	text, _, err := heatsink(t, "report", dir)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("the report's opening:\n%s", text[:min(len(text), 2500)])
	}
	flat := strings.Join(strings.Fields(text), " ")
	if !strings.Contains(flat, "Summary ------- Under load cpu:") || !strings.Contains(flat, "of its max_c (84 °C)") || !strings.Contains(flat, "before the coolant had moved") {
		t.Errorf("the report does not open with the blind spot:\n%s", text[:min(len(text), 1500)])
	}
}
