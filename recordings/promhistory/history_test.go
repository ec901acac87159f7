package promhistory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/recordings/promhistory"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm"
)

// The end-to-end test runs the real parts a site has: Debian's prometheus
// scraping prometheus-node-exporter (reading a fixture sysfs whose CPU
// temperatures the test moves along a heating curve), `heatsink collect
// --listen` reading the same tree, and a server of DCGM exporter text. Then
// heatsink's export of the Prometheus history and heatsink's own recording
// of the same readings must give the same report.

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func lookPath(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if p := "/usr/bin/" + n; fileExists(p) {
			return p
		}
	}
	t.Fatalf("%s not installed (scripts/deps.sh installs Debian's prometheus and prometheus-node-exporter)", names[0])
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// startProcess runs a peer until the test ends, its output in the log on failure.
func startProcess(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := os.Create(filepath.Join(t.TempDir(), filepath.Base(name)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s output:\n%s", filepath.Base(name), b)
		}
	})
}

// curve is the fixture's CPU temperature: idle at 40 °C until load, a
// first-order rise of 20 °C with a 4 s time constant, then a fall.
func curve(t, load, cool float64) float64 {
	switch {
	case t < load:
		return 40
	case t < cool:
		return 40 + 20*(1-math.Exp(-(t-load)/4))
	}
	peak := 40 + 20*(1-math.Exp(-(cool-load)/4))
	return 40 + (peak-40)*math.Exp(-(t-cool)/4)
}

// heater writes the coretemp inputs in place (same width, no truncation),
// as sysfs presents a value: readers holding the file open see each update.
func heater(ctx context.Context, t *testing.T, sys string, start time.Time, load, cool float64, wg *sync.WaitGroup) {
	hw := filepath.Join(sys, "devices/platform/coretemp.0/hwmon/hwmon1")
	var files []*os.File
	for i := 1; i <= 7; i++ {
		f, err := os.OpenFile(filepath.Join(hw, fmt.Sprintf("temp%d_input", i)), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			for _, f := range files {
				f.Close()
			}
		}()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			s := time.Since(start).Seconds()
			for i, f := range files {
				mC := int(math.Round((curve(s, load, cool) + float64(i)) * 1000))
				f.WriteAt([]byte(fmt.Sprintf("%06d\n", mC)), 0)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// fixtureNode copies the Intel fixture node and adds the cpufreq files
// node_exporter's cpufreq collector needs beside those heatsink reads.
func fixtureNode(t *testing.T) (sys, proc string) {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-a", "../../sensors/testdata/intel-node/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy fixture: %v %s", err, out)
	}
	sys, proc = filepath.Join(dir, "sys"), filepath.Join(dir, "proc")
	pols, _ := filepath.Glob(filepath.Join(sys, "devices/system/cpu/cpufreq/policy*"))
	for _, p := range pols {
		for name, v := range map[string]string{"scaling_available_governors": "performance powersave\n",
			"scaling_governor": "powersave\n", "cpuinfo_transition_latency": "0\n", "scaling_setspeed": "<unsupported>\n"} {
			if !fileExists(filepath.Join(p, name)) {
				os.WriteFile(filepath.Join(p, name), []byte(v), 0o644)
			}
		}
	}
	// Each coretemp input holds six digits, so in-place writes never leave
	// a stale digit behind.
	hw := filepath.Join(sys, "devices/platform/coretemp.0/hwmon/hwmon1")
	for i := 1; i <= 7; i++ {
		os.WriteFile(filepath.Join(hw, fmt.Sprintf("temp%d_input", i)), []byte("040000\n"), 0o644)
	}
	return sys, proc
}

func buildHeatsink(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "heatsink")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/heatsink")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build heatsink: %v\n%s", err, out)
	}
	return bin
}

func waitUp(t *testing.T, promAddr string, jobs int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/targets")
		if err == nil {
			var body struct {
				Data struct {
					ActiveTargets []struct {
						Health string `json:"health"`
					} `json:"activeTargets"`
				} `json:"data"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			up := 0
			for _, tg := range body.Data.ActiveTargets {
				if tg.Health == "up" {
					up++
				}
			}
			if up == jobs {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("Prometheus at %s did not see %d targets up within %v", promAddr, jobs, timeout)
}

func TestExportFromARealPrometheusMatchesHeatsinksOwnRecording(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Prometheus for about 45 s")
	}
	promBin := lookPath(t, "prometheus")
	neBin := lookPath(t, "prometheus-node-exporter", "node_exporter")
	hs := buildHeatsink(t)
	sys, proc := fixtureNode(t)
	dir := t.TempDir()
	const host = "testnode"

	// The DCGM exporter: one GPU heating along the same curve.
	start := time.Now().Truncate(time.Second).Add(time.Second)
	const loadAt, coolAt, end = 8.0, 24.0, 34.0
	dcgmAddr := freePort(t)
	dcgmSrv := &http.Server{Addr: dcgmAddr, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := time.Since(start).Seconds()
		temp := math.Round(curve(s, loadAt, coolAt) + 15) // DCGM reports whole degrees
		fmt.Fprintf(w, "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n")
		fmt.Fprintf(w, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-e2e\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=%q} %g\n", host, temp)
		fmt.Fprintf(w, "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
		fmt.Fprintf(w, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-e2e\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=%q} %g\n", host, 100+temp)
	})}
	go dcgmSrv.ListenAndServe()
	t.Cleanup(func() { dcgmSrv.Close() })

	neAddr := freePort(t)
	startProcess(t, neBin, "--path.sysfs="+sys, "--path.procfs="+proc, "--web.listen-address="+neAddr,
		"--collector.disable-defaults", "--collector.hwmon", "--collector.rapl", "--collector.cpufreq",
		"--collector.cpu", "--collector.meminfo", "--collector.loadavg", "--collector.stat")

	hsAddr := freePort(t)
	cfg := filepath.Join(dir, "node.yaml")
	os.WriteFile(cfg, []byte("host: "+host+"\nsources:\n  nvml: {disabled: true}\n"), 0o644)
	local := filepath.Join(dir, "local")
	jobs := filepath.Join(dir, "jobs")
	startProcess(t, hs, "collect", "--config", cfg, "--sysfs-root", sys, "--proc-root", proc,
		"--listen", hsAddr, "--out", local, "--jobs-dir", jobs, "--duration", fmt.Sprintf("%ds", int(end)+6))

	promAddr := freePort(t)
	promCfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(promCfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 800ms
scrape_configs:
  - job_name: node
    static_configs: [{targets: [%q], labels: {instance: "%s:9100"}}]
  - job_name: heatsink
    static_configs: [{targets: [%q]}]
  - job_name: dcgm
    static_configs: [{targets: [%q]}]
`, neAddr, host, hsAddr, dcgmAddr)), 0o644)
	startProcess(t, promBin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	waitUp(t, promAddr, 3, 30*time.Second)

	// The curve starts now that everything is scraped.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start = time.Now()
	heater(ctx, t, sys, start, loadAt, coolAt, &wg)
	// A Slurm job runs the load: the Prolog's and Epilog's records, which
	// the agent turns into the job tag (slurm_job in /metrics).
	time.Sleep(time.Until(start.Add(time.Duration(loadAt * float64(time.Second)))))
	if err := slurm.StartJob(jobs, slurm.Job{ID: "4242", User: "alice"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(start.Add(time.Duration(coolAt * float64(time.Second)))))
	if err := slurm.EndJob(jobs, "4242"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(start.Add(time.Duration((end + 2) * float64(time.Second)))))
	cancel()
	wg.Wait()

	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	phases := func() []rundir.Phase {
		// The baseline starts 2 s into the curve, so that neither recording
		// holds a reading of the fixture from before the heater's first write.
		b, l, c, e := at(2), at(loadAt), at(coolAt), at(end)
		return []rundir.Phase{{Name: "baseline", Start: b, End: &l}, {Name: "load", Start: l, End: &c}, {Name: "cooldown", Start: c, End: &e}}
	}
	// Read twice: heatsink's own metrics alone, and the site's exporters
	// alone (node_exporter and DCGM), each a run of its own.
	export := func(name string, vocab ...string) string {
		out := filepath.Join(dir, name)
		res, err := promhistory.Export(context.Background(), promhistory.Options{URL: "http://" + promAddr, Hosts: []string{host},
			From: at(2), To: at(end), Phases: phases(), Vocabularies: vocab}, out)
		if err != nil {
			t.Fatal(err)
		}
		if err := rundir.WriteMeta(out, res.Meta); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d points; series %v", name, res.Points, res.Series)
		for _, v := range vocab {
			if res.Series[v] == 0 {
				t.Errorf("no %s series read", v)
			}
		}
		return out
	}
	fromHeatsink := export("heatsink", "heatsink")
	fromExporters := export("exporters", "node_exporter", "dcgm")

	// heatsink's own recording of the same readings, given the same phases.
	deadline := time.Now().Add(15 * time.Second)
	for !fileExists(filepath.Join(local, "run.json")) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	m, err := rundir.ReadMeta(local)
	if err != nil {
		t.Fatalf("heatsink collect's run: %v", err)
	}
	m.Phases = phases()
	if err := rundir.WriteMeta(local, m); err != nil {
		t.Fatal(err)
	}

	report := func(dir string) map[string]analysis.ComponentResult {
		r, err := analysis.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]analysis.ComponentResult{}
		for _, c := range analysis.Analyze(r, analysis.DefaultOptions()).Components {
			out[c.ID] = c
		}
		return out
	}
	want := report(local)
	cpuID := ""
	for id, c := range want {
		if c.Kind == "cpu" {
			cpuID = id
		}
	}
	if cpuID == "" {
		t.Fatalf("heatsink's own recording has no CPU component: %v", want)
	}
	w := want[cpuID]
	near := func(what string, a, b *float64, tol float64) {
		t.Helper()
		if a == nil || b == nil {
			t.Errorf("%s: recorded %v, exported %v", what, ptrStr(a), ptrStr(b))
			return
		}
		if math.Abs(*a-*b) > tol {
			t.Errorf("%s: recorded %.3f, exported %.3f (tolerance %.3f)", what, *a, *b, tol)
		}
		t.Logf("%s: recorded %.3f, exported %.3f", what, *a, *b)
	}
	var got map[string]analysis.ComponentResult
	for _, exp := range []string{fromHeatsink, fromExporters} {
		got = report(exp)
		g := got[cpuID]
		if g.ID == "" {
			t.Fatalf("%s: no component %s (heatsink's component names); got %v", filepath.Base(exp), cpuID, keys(got))
		}
		near(filepath.Base(exp)+": idle mean (°C)", w.IdleMeanC, g.IdleMeanC, 0.05)
		near(filepath.Base(exp)+": max (°C)", w.MaxC, g.MaxC, 0.5)
		// One scrape's timing: the peak may be read one step apart.
		near(filepath.Base(exp)+": heat interval (s/°C)", w.HeatIntervalSPerC, g.HeatIntervalSPerC, 1.5/(*w.MaxC-*w.IdleMeanC))
	}

	// By job: its host and span come from the series its id labels.
	byJob := filepath.Join(dir, "job")
	res, err := promhistory.Export(context.Background(), promhistory.Options{URL: "http://" + promAddr, Job: "4242", From: at(2), To: at(end)}, byJob)
	if err != nil {
		t.Fatalf("export by job: %v", err)
	}
	if len(res.Meta.Phases) != 3 || res.Meta.Host != host {
		t.Fatalf("export by job: host %q, phases %+v; want %s with baseline, load and cooldown", res.Meta.Host, res.Meta.Phases, host)
	}
	// The job's label reaches Prometheus through three 1 s cadences in a
	// row (the agent's poll of the jobs directory, the collector's tick,
	// the scrape), so up to 3 s late by design; a loaded machine adds to it.
	lag := 3*time.Second + 2*time.Second
	if load := res.Meta.Phases[1]; load.Name != "load" || load.Start.Sub(at(loadAt)).Abs() > lag ||
		load.End == nil || load.End.Sub(at(coolAt)).Abs() > lag {
		t.Errorf("the job's load phase %s .. %v; the job ran %s .. %s", load.Start, load.End, at(loadAt), at(coolAt))
	}

	// A Slurm job summary's gathering, from Prometheus instead of InfluxDB:
	// the job's readings, without the job tag.
	gathered := filepath.Join(dir, "gathered")
	n, err := slurm.Gather(context.Background(), slurm.Readings{Prometheus: "http://" + promAddr, Hosts: []string{host},
		From: at(loadAt), To: at(coolAt)}, gathered)
	if err != nil || n == 0 {
		t.Fatalf("slurm.Gather from Prometheus: %d points, %v", n, err)
	}
	if err := rundir.ForEachPoint(gathered, func(p *point.Point) error {
		if p.Tag("job") != "" || p.Time.Before(at(loadAt).Add(-time.Second)) || p.Time.After(at(coolAt)) {
			t.Errorf("gathered %s at %s (job %q), outside the job or tagged with it", p.Measurement, p.Time, p.Tag("job"))
			return fmt.Errorf("stop")
		}
		return nil
	}, nil); err != nil && err.Error() != "stop" {
		t.Fatal(err)
	}

	var gpu analysis.ComponentResult
	for _, c := range got {
		if c.Kind == "gpu_core" {
			gpu = c
		}
	}
	if gpu.MaxC == nil || math.Abs(*gpu.MaxC-math.Round(curve(coolAt, loadAt, coolAt)+15)) > 1 {
		t.Errorf("GPU core from the DCGM exporter: max %v, want about %.0f", ptrStr(gpu.MaxC), curve(coolAt, loadAt, coolAt)+15)
	}
}

func keys(m map[string]analysis.ComponentResult) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func ptrStr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%.3f", *p)
}

func TestExportRefusesBadOptions(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		o    promhistory.Options
		want string
	}{
		{promhistory.Options{From: t0, To: t0.Add(time.Hour), Hosts: []string{"a"}}, "no server URL"},
		{promhistory.Options{URL: "http://127.0.0.1:1", From: t0, To: t0, Hosts: []string{"a"}}, "is empty"},
		{promhistory.Options{URL: "http://127.0.0.1:1", From: t0, To: t0.Add(time.Hour), Hosts: []string{"a\nb"}}, "not a host name"},
	} {
		_, err := promhistory.Export(context.Background(), tc.o, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("promhistory.Export(%+v): %v, want %q", tc.o, err, tc.want)
		}
	}
	_, err := promhistory.Export(context.Background(), promhistory.Options{URL: "http://127.0.0.1:1", From: t0, To: t0.Add(time.Hour), Hosts: []string{"a"}}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("an unreachable server: %v, want an error naming it", err)
	}
}
