package tune

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTunePrintsTheBudgetBeforeSpendingItAndWritesTheReport(t *testing.T) {
	s, tab := synthetic(t)
	var sources []Observation
	for i, n := range []float64{60, 120, 180} {
		sources = append(sources, tab.Sample(Task{"n": n}, 100, uint64(i))...)
	}
	var log bytes.Buffer
	out := t.TempDir()
	rep, err := Tune(context.Background(), Options{Space: s, Task: Task{"n": 150}, Methods: []string{"gc", "random"},
		Seed: 1, Sources: sources, Evaluator: tab, Out: out, Log: &log,
		RunArgs: []string{"--", "run.sh", "{ti}", "{n}"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(log.String(), "\n")
	if !strings.HasPrefix(lines[0], "heatsink tune: budget: ") || !strings.HasPrefix(lines[1], "gc   1/") {
		t.Fatalf("log does not print the budget first:\n%s", log.String())
	}
	if rep.Budget == nil || !rep.Budget.Determinate || rep.BudgetUsed != rep.Budget.K {
		t.Fatalf("budget %+v used %d", rep.Budget, rep.BudgetUsed)
	}
	if len(rep.Curves) != 2 || len(rep.Curves[0].Evaluations) != rep.BudgetUsed {
		t.Fatalf("curves %+v", rep.Curves)
	}
	if rep.Best == nil || len(rep.RunCommand) != 4 || rep.RunCommand[2] != rep.Best.Values["ti"] || rep.RunCommand[3] != "150" {
		t.Fatalf("recommendation %+v, command %v", rep.Best, rep.RunCommand)
	}
	var back Report
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil || json.Unmarshal(b, &back) != nil || back.Best.Objective != rep.Best.Objective {
		t.Errorf("report.json %s (%v)", b, err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(md), "| evaluation | gc | random |") || !strings.Contains(string(md), "heatsink run -- run.sh") ||
		!strings.Contains(string(md), "GC variant: --gc marginals=space,order=frequent,rest=local,local=3,model=quad.") {
		t.Errorf("report.md:\n%s", md)
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || strings.Count(string(page), "<polyline") != 2 {
		t.Errorf("report.html should plot 2 best-so-far curves (%v)", err)
	}
}

func TestTuneWithoutSourcesNeedsABudget(t *testing.T) {
	s, tab := synthetic(t)
	_, err := Tune(context.Background(), Options{Space: s, Task: Task{"n": 90}, Methods: []string{"random"}, Evaluator: tab})
	if err == nil || !strings.Contains(err.Error(), "give --budget N") {
		t.Errorf("err %v", err)
	}
	_, err = Tune(context.Background(), Options{Space: s, Task: Task{"size": 90}, Methods: []string{"random"}, Budget: 3, Evaluator: tab})
	if err == nil || !strings.Contains(err.Error(), "--task n=VALUE") {
		t.Errorf("err %v", err)
	}
}
