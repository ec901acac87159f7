package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"text/tabwriter"

	"github.com/heatsink-hpc/heatsink/kernels/ri"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

func newRICmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ri",
		Short: "Random indexing outside a run: train word vectors, query neighbours, score them on similarity sets",
	}
	cmd.AddCommand(newRITrainCmd(), newRINearestCmd(), newRIEvalCmd())
	return cmd
}

func newRITrainCmd() *cobra.Command {
	var (
		sets []string
		out  string
		eval []string
	)
	cmd := &cobra.Command{
		Use:   "train --set key=value... --out VECTORS [--eval SET]...",
		Short: "Compute vectors once with the ri workload's parameters (see heatsink workloads) and write them in word2vec text format",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := workloads.ParseSet(sets)
			if err != nil {
				return err
			}
			v, _, err := workloads.Resolve(ri.Workload{}, workloads.Layer{Source: "--set", Values: set})
			if err != nil {
				return err
			}
			vecs, st, err := ri.Train(cmd.Context(), v)
			if err != nil {
				return err
			}
			if err := vecs.SaveWord2Vec(out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%d vectors of dimension %d written to %s\n", len(vecs.Terms), vecs.Dim, out)
			m := st.Metrics()
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "  %-28s %.4g\n", k, m[k])
			}
			return writeScores(cmd, vecs, eval)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "a workload parameter key=value (repeatable)")
	cmd.Flags().StringVar(&out, "out", "vectors.txt", "where to write the vectors (word2vec text format)")
	cmd.Flags().StringArrayVar(&eval, "eval", nil, "a similarity set to score the vectors on (word1 word2 score per line; repeatable)")
	return cmd
}

func newRINearestCmd() *cobra.Command {
	var (
		vectors string
		n       int
	)
	cmd := &cobra.Command{
		Use:   "nn --vectors FILE WORD...",
		Short: "Print each word's nearest neighbours by cosine similarity",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			vecs, err := ri.LoadWord2Vec(vectors)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, word := range args {
				nn, err := vecs.Nearest(word, n)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%s:", word)
				for _, x := range nn {
					fmt.Fprintf(w, " %s %.3f", x.Term, x.Cosine)
				}
				fmt.Fprintln(w)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&vectors, "vectors", "vectors.txt", "word2vec text file")
	cmd.Flags().IntVarP(&n, "n", "n", 10, "neighbours per word")
	return cmd
}

func newRIEvalCmd() *cobra.Command {
	var vectors string
	cmd := &cobra.Command{
		Use:   "eval --vectors FILE SET...",
		Short: "Score vectors on word-similarity sets (WS-353, SimLex-999): Spearman over covered pairs, and coverage",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			vecs, err := ri.LoadWord2Vec(vectors)
			if err != nil {
				return err
			}
			return writeScores(cmd, vecs, args)
		},
	}
	cmd.Flags().StringVar(&vectors, "vectors", "vectors.txt", "word2vec text file")
	return cmd
}

func writeScores(cmd *cobra.Command, vecs *ri.Vectors, sets []string) error {
	if len(sets) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SET\tSPEARMAN\tCOVERED\tPAIRS")
	for _, path := range sets {
		pairs, err := ri.LoadSimilarity(path)
		if err != nil {
			return err
		}
		s := ri.EvalSimilarity(vecs, pairs)
		fmt.Fprintf(tw, "%s\t%.3f\t%d (%.0f%%)\t%d\n", filepath.Base(path), s.Spearman, s.Covered, 100*s.Coverage(), s.Pairs)
	}
	return tw.Flush()
}
