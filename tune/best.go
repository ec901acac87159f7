package tune

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/heatsink-hpc/heatsink/workloads"
	"gopkg.in/yaml.v3"
)

// TunedFile is the recommended configuration, beside report.json, as
// `heatsink run --tuned` takes it back: the job (a built-in workload and its
// --set parameters, or the command) with the configuration's values and
// the task's filled in, and where it came from.
const TunedFile = "best.yaml"

// Tuned is best.yaml.
type Tuned struct {
	Space      string            `yaml:"space"`
	Task       Task              `yaml:"task"`
	Method     string            `yaml:"method"`
	Objective  float64           `yaml:"objective"`
	Maximize   bool              `yaml:"maximize"`
	Evaluation string            `yaml:"evaluation,omitempty"` // its run directory
	Values     map[string]string `yaml:"values"`
	Workload   string            `yaml:"workload,omitempty"`
	Set        map[string]string `yaml:"set,omitempty"`
	Command    []string          `yaml:"command,omitempty"`
}

// bestOf is the report's recommendation as best.yaml; runCommand is the
// filled-in `heatsink run` arguments (--workload NAME --set k=v... or
// -- CMD...), as WorkloadRunArgs and the CLI build them.
func bestOf(r *Report, runCommand []string) (*Tuned, error) {
	b := &Tuned{Space: r.Space, Task: r.Task, Method: r.Best.Method, Objective: r.Best.Objective, Maximize: r.Maximize,
		Evaluation: r.Best.Run, Values: r.Best.Values}
	switch {
	case len(runCommand) > 1 && runCommand[0] == "--":
		b.Command = runCommand[1:]
		return b, nil
	case len(runCommand) > 1 && runCommand[0] == "--workload":
		b.Workload, b.Set = runCommand[1], map[string]string{}
		var sets []string
		for rest := runCommand[2:]; len(rest) > 0; rest = rest[2:] {
			if len(rest) < 2 || rest[0] != "--set" {
				return nil, fmt.Errorf("run command %q: want --workload NAME [--set k=v]...", runCommand)
			}
			sets = append(sets, rest[1])
		}
		var err error
		if b.Set, err = workloads.ParseSet(sets); err != nil {
			return nil, fmt.Errorf("run command %q: %w", runCommand, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("run command %q: want --workload NAME [--set k=v]... or -- CMD", runCommand)
}

func (b *Tuned) write(path string) error {
	y, err := yaml.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	head := "# heatsink tune's recommended configuration. Run it: heatsink run --tuned " + filepath.Dir(path) + " --out RUN_DIR\n"
	return os.WriteFile(path, append([]byte(head), y...), 0o644)
}

// LoadTuned reads best.yaml, or the best.yaml in a tuning directory.
func LoadTuned(path string) (*Tuned, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, TunedFile)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--tuned: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var b Tuned
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("--tuned %s: %w", path, err)
	}
	if (b.Workload == "") == (len(b.Command) == 0) {
		return nil, fmt.Errorf("--tuned %s: want a workload or a command, exactly one", path)
	}
	return &b, nil
}

// Job is what `heatsink run` runs: a built-in workload with its parameters
// as layers for workloads.Resolve (best.yaml's, then --set's), or a
// command.
type Job struct {
	Workload string
	Layers   []workloads.Layer
	Command  []string
}

// TunedJob is the job `heatsink run --tuned PATH` runs: the workload and
// its parameters, or the command, of best.yaml. A --set given too
// overrides a parameter of the workload (workloads.Resolve notes it); a
// --workload or a command given too is an error, as the file names the
// job. With no path the job given is returned as it is. --set is split by
// workloads.ParseSet, the one parser, so a key given twice is an error
// with or without --tuned.
func TunedJob(path, workload string, sets, args []string) (Job, error) {
	set, err := workloads.ParseSet(sets)
	if err != nil {
		return Job{}, err
	}
	var layers []workloads.Layer
	if len(set) > 0 {
		layers = []workloads.Layer{{Source: "--set", Values: set}}
	}
	if path == "" {
		return Job{Workload: workload, Layers: layers, Command: args}, nil
	}
	if workload != "" || len(args) > 0 {
		return Job{}, fmt.Errorf("--tuned %s names the job: give no --workload and no command with it", path)
	}
	b, err := LoadTuned(path)
	if err != nil {
		return Job{}, err
	}
	if len(b.Command) > 0 {
		if len(sets) > 0 {
			return Job{}, fmt.Errorf("--tuned %s is a command, not a built-in workload: --set does not apply", path)
		}
		return Job{Command: b.Command}, nil
	}
	tuned := workloads.Layer{Source: "--tuned " + path, Values: b.Set}
	return Job{Workload: b.Workload, Layers: append([]workloads.Layer{tuned}, layers...)}, nil
}
