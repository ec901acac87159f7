// Command tunebench runs the chapter's few-shot transfer protocol against a
// brute-forced ground truth (by default the syr2k table bench/syr2k-brute.sh
// measured on this project's shared 2-core machine): random-search source
// data for the source tasks, then GC, random, TPE and the untuned default on
// each target task with the same budget and seeds, every evaluation
// replayed from the table (so the figures are repeatable and cost no
// compiles). It prints, per target and method, the best objective after
// 1, 3, 10 and 30 evaluations and the mean of all evaluations as ratios to
// the optimum (mean over seeds), whether the top 1 % and 5 % of the optimum
// were reached within the GC's predicted budget, and the budget itself.
// bench/tune.sh runs it; -space, -table, -sources and -targets take another
// truth and ladder (tune/testdata/syr2k-truth-large.csv.gz, measured on the
// device machine's CPU, with syr2k-large.yaml).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/tune"
)

func main() {
	spacePath := flag.String("space", "tune/testdata/syr2k.yaml", "tuning space")
	tablePath := flag.String("table", "tune/testdata/syr2k-truth.csv", "brute-forced ground truth (CSV, '#' comments, .gz read through gzip)")
	objective := flag.String("objective", "min_s", "objective column (a runtime: smaller is better)")
	sources := flag.String("sources", "60,120,180", "source tasks (n)")
	targets := flag.String("targets", "SM=90,ML=150,XL=240", "target tasks (name=n)")
	sourceEvals := flag.Int("source-evals", 200, "random-search evaluations per source task")
	budget := flag.Int("budget", 30, "evaluations per target and method")
	seeds := flag.String("seeds", "1,2,3", "method seeds")
	quantile := flag.Float64("quantile", 0.3, "the best share of source evaluations the GC is fitted on")
	gcVariant := flag.String("gc", "", "the GC's variant, as heatsink tune --gc takes it (default: tune's default)")
	flag.Parse()
	gc, err := tune.ParseGCOptions([]string{*gcVariant})
	if *gcVariant == "" {
		gc, err = tune.ParseGCOptions(nil)
	}
	if err != nil {
		log.Fatal(err)
	}

	s, err := tune.LoadSpace(*spacePath)
	if err != nil {
		log.Fatal(err)
	}
	tab, err := tune.LoadTable(*tablePath, s, *objective)
	if err != nil {
		log.Fatal(err)
	}
	feature := s.Task[0].Name
	x := &tune.Experiment{
		Space: s, Table: tab, SourceEvals: *sourceEvals, SourceSeed: 19,
		Budget: *budget, Fit: tune.FitOptions{Quantile: *quantile, GC: gc},
		Checkpoints: []int{1, 3, 10, 30},
	}
	for _, v := range strings.Split(*sources, ",") {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			log.Fatalf("-sources %q: %v", v, err)
		}
		x.Sources = append(x.Sources, tune.Task{feature: n})
	}
	for _, v := range strings.Split(*targets, ",") {
		name, val, ok := strings.Cut(v, "=")
		n, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil {
			log.Fatalf("-targets %q: want name=value", v)
		}
		x.Targets = append(x.Targets, tune.NamedTask{Name: name, Task: tune.Task{feature: n}})
	}
	for _, v := range strings.Split(*seeds, ",") {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			log.Fatalf("-seeds %q: %v", v, err)
		}
		x.Seeds = append(x.Seeds, n)
	}
	res, err := x.Run(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("space %s\nsources %s (%d random evaluations each, replayed), GC (%s) fitted on the best %g%%; %d evaluations per target, seeds %s\n",
		s.Describe(), *sources, *sourceEvals, gc, 100**quantile, *budget, *seeds)
	fmt.Printf("objective %s from %s: ratios are best/optimum (1.000 = the brute-forced optimum; larger is slower)\n\n", *objective, *tablePath)
	tune.WriteComparison(os.Stdout, x, res)
}
