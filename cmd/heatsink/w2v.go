package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/heatsink-hpc/heatsink/kernels/w2v"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

func newW2VEvalCmd() *cobra.Command {
	var (
		format, sets, planted string
		threads               int
	)
	cmd := &cobra.Command{
		Use:   "w2v-eval VECTORS",
		Short: "Score word vectors: WS-353 and SimLex-999 Spearman with coverage, Google analogies by 3CosAdd and 3CosMul, a planted corpus's structure",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := w2v.LoadVectors(args[0], w2v.Format(format))
			if err != nil {
				return err
			}
			fsys, err := w2v.OpenSets(sets)
			if err != nil {
				return err
			}
			o := w2v.EvalOptions{Sets: fsys, Threads: threads}
			if planted != "" {
				p, err := w2v.ParsePlanted(planted)
				if err != nil {
					return err
				}
				o.Truth = p.Truth()
			}
			r, err := w2v.Evaluate(v, o)
			if err != nil {
				return err
			}
			return r.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&format, "format", string(w2v.FormatAuto), "vector file format: auto, text or binary (word2vec's)")
	cmd.Flags().StringVar(&sets, "sets", w2v.BuiltinSets, "evaluation sets: builtin (shipped with heatsink), none, or a directory of ws353*.txt, SimLex999.txt, google.txt")
	cmd.Flags().StringVar(&planted, "planted", "", "the planted: spec of the corpus the vectors were trained on, to score its clusters and analogies")
	cmd.Flags().IntVar(&threads, "threads", 0, "goroutines (0: one per core)")
	return cmd
}

func newW2VTrainCmd() *cobra.Command {
	var xf w2vTrainFlags
	cmd := &cobra.Command{
		Use:   "w2v-train --set key=value... --out VECTORS",
		Short: "Train word vectors once with the full-w2v workload's parameters (see heatsink workloads) and write them in word2vec's format",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return runW2vTrain(cmd, args, &xf) },
	}
	cmd.Flags().StringArrayVar(&xf.sets, "set", nil, "a workload parameter key=value (repeatable; heatsink workloads lists them)")
	cmd.Flags().StringVar(&xf.out, "out", "vectors.txt", "where to write the vectors")
	cmd.Flags().StringVar(&xf.format, "format", string(w2v.FormatText), "vector file format: "+strings.Join([]string{string(w2v.FormatText), string(w2v.FormatBinary)}, " or "))
	cmd.Flags().StringVar(&xf.saveVoc, "save-vocab", "", "also write the vocabulary (word2vec's -save-vocab format; --set vocab= reuses it)")
	cmd.Flags().BoolVar(&xf.eval, "eval", false, "score the vectors on the evaluation sets in --sets")
	cmd.Flags().StringVar(&xf.evalDir, "sets", w2v.BuiltinSets, "evaluation sets: builtin (shipped with heatsink) or a directory")
	return cmd
}

// w2vTrainFlags are the command's flags.
type w2vTrainFlags struct {
	sets                 []string
	out, format, saveVoc string
	eval                 bool
	evalDir              string
}

func runW2vTrain(cmd *cobra.Command, args []string, xf *w2vTrainFlags) error {
	set, err := workloads.ParseSet(xf.sets)
	if err != nil {
		return err
	}
	v, _, err := workloads.Resolve(w2v.Workload{}, workloads.Layer{Source: "--set", Values: set})
	if err != nil {
		return err
	}
	tr, err := w2v.Train(cmd.Context(), v)
	if err != nil {
		return err
	}
	if xf.saveVoc != "" {
		if err := tr.Corpus.Vocab.Save(xf.saveVoc); err != nil {
			return err
		}
	}
	if err := tr.Vectors.Save(xf.out, w2v.Format(xf.format)); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%d vectors of dimension %d written to %s (%s)\n", len(tr.Vectors.Words), tr.Vectors.Dim, xf.out, tr.Stats.Device)
	m := tr.Stats.Metrics()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-20s %.4g\n", k, m[k])
	}
	if !xf.eval && tr.Truth == nil {
		return nil
	}
	o := w2v.EvalOptions{Truth: tr.Truth}
	if xf.eval {
		if o.Sets, err = w2v.OpenSets(xf.evalDir); err != nil {
			return err
		}
	}
	r, err := w2v.Evaluate(tr.Vectors, o)
	if err != nil {
		return err
	}
	return r.WriteText(w)
}
