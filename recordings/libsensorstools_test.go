package recordings

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// lstWriter writes a recording as LibSensorsTools v0.3.0 does in
// wrapped-command mode (SensorTools/driver/common_driver.cpp): numbers as a
// C++ ostream prints them (six significant digits), event timestamps and
// initial-wait polls in seconds since the tool started, and the polls of
// the wrapped command and the post-wait in seconds since t0, the instant of
// initial-wait-start.
type lstWriter struct {
	b strings.Builder
}

func cppNum(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func (w *lstWriter) header(version string) {
	w.b.WriteString("[\n{\"arguments\": { \n\t\"help\": 0,\n\t\"cpu\": 1,\n\t\"gpu\": 1,\n\t\"format\": \"json\",\n")
	w.b.WriteString("\t\"poll\": 1,\n\t\"initial-wait\": 3,\n\t\"post-wait\": 3,\n\t\"timeout\": 0,\n\t\"debug\": 0,\n\t\"version\": \"0\",\n")
	w.b.WriteString("\t\"wrapped-call\": \"./dgemm 8192 \"\n\t}\n},\n")
	fmt.Fprintf(&w.b, "{\"versions\": {\n\t\"SensorTools\": \"%s\",\n\t\"LibSensors\": \"3.6.0\",\n\t\"NVML\": \"12020\",\n\t\"Nlohmann_Json\": \"3.11.2\"\t}\n},\n", version)
}

func (w *lstWriter) event(name string, ts float64, extra string) {
	fmt.Fprintf(&w.b, "{\"event\": \"%s\", \"timestamp\": %s%s},\n", name, cppNum(ts), extra)
}

// poll writes one poll stamped ts on its own clock, v0.3.0 style.
func (w *lstWriter) poll(ts, gpuTemp, cpuTemp float64) {
	fmt.Fprintf(&w.b, "{\"event\": \"poll-data\", \"timestamp\": %s,\n", cppNum(ts))
	fmt.Fprintf(&w.b, "\t\"cpu-coretemp-isa-0000-temperature-0\": %s,\n", cppNum(cpuTemp))
	fmt.Fprintf(&w.b, "\t\"gpu-0-name\": \"NVIDIA H100 80GB HBM3\",\n\t\"gpu-0-gpu-temperature\": %s,\n", cppNum(gpuTemp))
	w.b.WriteString("\t\"gpu-0-power-usage\": 312000,\n\"poll-update-duration\": 0.00712\n},\n")
}

func (w *lstWriter) end(ts float64) {
	fmt.Fprintf(&w.b, "{ \"event\": \"shutdown\", \"timestamp\": %s }\n]\n", cppNum(ts))
}

// lstRun is a protocol as the tool runs it: when each poll was taken on
// the one time axis (seconds since the tool started), and its phase.
type lstRun struct {
	t0                       float64 // initial-wait-start
	waitEnd, cmdEnd, postEnd float64
	polls                    []lstTruth
}

type lstTruth struct {
	at      float64
	phase   string
	gpuTemp float64
}

func refRun() lstRun {
	r := lstRun{t0: 0.613245, waitEnd: 3.62, cmdEnd: 7.64, postEnd: 10.66}
	// Baseline at 36 °C, load heating to 60 °C, cooldown back down. The
	// first load poll comes 0.02 s after initial-wait-end: shifted back by
	// t0 it would land in the baseline, which is the bug this guards.
	for i, at := range []float64{0.6133, 1.6151, 2.6170} {
		r.polls = append(r.polls, lstTruth{at, "baseline", 36 + float64(i)*0.25})
	}
	for i, at := range []float64{3.64, 4.6418, 5.6437, 6.6455} {
		r.polls = append(r.polls, lstTruth{at, "load", 48 + float64(i)*4})
	}
	for i, at := range []float64{7.6601, 8.6620, 9.6641} {
		r.polls = append(r.polls, lstTruth{at, "cooldown", 55 - float64(i)*6})
	}
	return r
}

// write renders r as version writes it; truncate cuts the file before the
// post-wait-end event, in the middle of a poll, as a killed tool leaves it.
func (r lstRun) write(version string, truncate bool) string {
	var w lstWriter
	w.header(version)
	w.b.WriteString("{\"event\": \"initialization\", \"duration\": 0.613201},\n")
	w.event("initial-wait-start", r.t0, "")
	phase := "baseline"
	for _, p := range r.polls {
		if p.phase != phase {
			switch p.phase {
			case "load":
				w.event("initial-wait-end", r.waitEnd, `, "wrapped-command": "./dgemm 8192 "`)
			case "cooldown":
				w.event("wrapped-command-end", r.cmdEnd, "")
				w.event("post-wait-start", r.cmdEnd+0.0001, "")
			}
			phase = p.phase
		}
		ts := p.at
		if p.phase != "baseline" {
			ts -= r.t0
		}
		if version == "0.1.0" {
			fmt.Fprintf(&w.b, "{\"event\": \"poll-data\", \"timestamp\": %s,\n", cppNum(ts))
			fmt.Fprintf(&w.b, "\t\"cpu-coretemp-isa-0000-temperature-0\": %s,\n", cppNum(40))
			fmt.Fprintf(&w.b, "\t\"gpu-0-name\": \"TITAN V\",\n\t\"gpu-0-gpu-temperature\": %s,\n", cppNum(p.gpuTemp))
			w.b.WriteString("\"dummy-end\": true\n},\n{\"event\": \"poll-update\", \"duration\": 0.0055915},\n")
		} else {
			w.poll(ts, p.gpuTemp, 40)
		}
	}
	if truncate {
		w.b.WriteString("{\"event\": \"poll-data\", \"timestamp\": 10.1,\n\t\"gpu-0-gpu-temp")
		return w.b.String()
	}
	w.event("post-wait-end", r.postEnd, `, "max-wait": 3, "reason": "timeout"`)
	w.end(r.postEnd + 0.0001)
	return w.b.String()
}

func phaseAt(phases []rundir.Phase, t time.Time) string {
	for _, ph := range phases {
		if !t.Before(ph.Start) && (ph.End == nil || !t.After(*ph.End)) {
			return ph.Name
		}
	}
	return ""
}

func TestLibSensorsToolsPollsLandInTheirPhaseOnTheToolsTimeAxis(t *testing.T) {
	start := time.Date(2024, 5, 6, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * 1e9)) }
	run := refRun()
	for _, tc := range []struct {
		name, version string
		truncate      bool
	}{
		{"v0.3.0", "0.3.0", false},
		{"v0.1.0 with dummy-end and poll-update records", "0.1.0", false},
		{"v0.3.0 killed mid-poll, no closing bracket", "0.3.0", true},
		{"v0.1.0 killed mid-poll", "0.1.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "node1.json")
			if err := os.WriteFile(path, []byte(run.write(tc.version, tc.truncate)), 0o644); err != nil {
				t.Fatal(err)
			}
			pts, res := readAll(t, path, Options{Host: "node1", Start: start})
			if res.Format != LibSensorsTools {
				t.Fatalf("format %s", res.Format)
			}
			if res.Versions["SensorTools"] != tc.version {
				t.Errorf("versions %v", res.Versions)
			}
			var gpu []float64
			var times []time.Time
			for _, p := range pts {
				if p.Measurement == "gpu" {
					gpu = append(gpu, field(t, p, "temp_c"))
					times = append(times, p.Time)
				}
			}
			if len(gpu) != len(run.polls) {
				t.Fatalf("%d gpu polls imported, want %d", len(gpu), len(run.polls))
			}
			for i, want := range run.polls {
				// Six significant digits in the file: within 1 ms.
				if d := times[i].Sub(at(want.at)); d < -time.Millisecond || d > time.Millisecond {
					t.Errorf("poll %d at %v, want %v (off by %v)", i, times[i].Sub(start), at(want.at).Sub(start), d)
				}
				if got := phaseAt(res.Phases, times[i]); got != want.phase {
					t.Errorf("poll %d (%.0f °C) is in phase %q, want %q", i, gpu[i], got, want.phase)
				}
				if gpu[i] != want.gpuTemp {
					t.Errorf("poll %d temp %v, want %v", i, gpu[i], want.gpuTemp)
				}
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "outside the phase") || strings.Contains(w, "poll-update-duration") {
					t.Errorf("warning %q", w)
				}
			}
			cool := res.Phases[len(res.Phases)-1]
			if cool.Name != "cooldown" {
				t.Fatalf("phases %+v", res.Phases)
			}
			if tc.truncate {
				if cool.End != nil || len(res.Bad) != 1 || !strings.Contains(res.Bad[0].Error(), "cut short") {
					t.Errorf("cooldown end %v, bad %v: want an open cooldown and the torn record reported", cool.End, res.Bad)
				}
			} else if cool.End == nil || !cool.End.Equal(at(run.postEnd)) || len(res.Bad) != 0 {
				t.Errorf("cooldown end %v, bad %v", cool.End, res.Bad)
			}
		})
	}
}

// A recording whose polls disagree with their place in the file says so,
// rather than silently moving readings between phases.
func TestLibSensorsToolsWarnsWhenPollsFallOutsideTheirPhase(t *testing.T) {
	run := refRun()
	run.polls[3].at = 3.0 // a load poll stamped before initial-wait-end
	path := filepath.Join(t.TempDir(), "odd.json")
	if err := os.WriteFile(path, []byte(run.write("0.3.0", false)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, res := readAll(t, path, Options{Host: "node1", Start: time.Date(2024, 5, 6, 10, 0, 0, 0, time.UTC)})
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "1 LibSensorsTools polls")
	}
	if !found {
		t.Errorf("warnings %q, want one about the poll outside its phase", res.Warnings)
	}
}
