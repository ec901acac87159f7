package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// registerCompletions teaches `heatsink completion`'s scripts what the
// arguments are, so that Tab offers real names instead of files: every
// --workload flag completes the built-in workloads, every --set beside it
// that workload's parameters (key= first, then a choice where the parameter
// has choices), and every command whose usage names RUN_DIR as its first
// argument completes run directories. Keyed on the flags and the usage
// placeholder, a new command that takes them completes them with no line
// here.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("workload") != nil {
			c.RegisterFlagCompletionFunc("workload", completeWorkloads)
			if c.Flags().Lookup("set") != nil {
				c.RegisterFlagCompletionFunc("set", completeSets)
			}
		}
		if f := strings.Fields(c.Use); len(f) > 1 && f[1] == "RUN_DIR" && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = completeRunDirs
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeWorkloads offers the built-in workloads, each with its summary.
func completeWorkloads(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, w := range builtinWorkloads() {
		if strings.HasPrefix(w.Name(), toComplete) {
			out = append(out, cobra.CompletionWithDesc(w.Name(), w.Summary()))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeSets offers the parameters of the workload --workload names as
// "key=" (no space after, the value comes next); after the "=" it offers
// the parameter's choices, if it has any.
func completeSets(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	name, _ := cmd.Flags().GetString("workload")
	w, err := workloads.Find(builtinWorkloads(), name)
	if err != nil {
		return cobra.AppendActiveHelp(nil, "give --workload first: --set keys are its parameters"), cobra.ShellCompDirectiveNoFileComp
	}
	key, value, hasValue := strings.Cut(toComplete, "=")
	var out []cobra.Completion
	for _, p := range w.Params() {
		switch {
		case !hasValue && strings.HasPrefix(p.Name, key):
			out = append(out, cobra.CompletionWithDesc(p.Name+"=", p.Help))
		case hasValue && p.Name == key:
			for _, c := range p.Choices {
				if strings.HasPrefix(c, value) {
					out = append(out, cobra.Completion(p.Name+"="+c))
				}
			}
		}
	}
	if hasValue {
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeRunDirs offers the run directories (those holding run.json) in the
// directory toComplete points into, and, to descend, the directories there
// that hold run directories one level down (with a trailing slash). A run
// directory given already is not offered again.
func completeRunDirs(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, prefix := filepath.Split(toComplete)
	ents, err := os.ReadDir(cmpDir(dir))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var runs, parents []cobra.Completion
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) || (prefix == "" && strings.HasPrefix(e.Name(), ".")) {
			continue
		}
		path := dir + e.Name()
		switch {
		case isRunDir(path):
			if !slices.Contains(args, path) {
				runs = append(runs, cobra.Completion(path))
			}
		case holdsRunDir(path):
			parents = append(parents, cobra.Completion(path+"/"))
		}
	}
	if len(parents) > 0 {
		return append(runs, parents...), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return runs, cobra.ShellCompDirectiveNoFileComp
}

// cmpDir is the directory to list for a completion's directory part.
func cmpDir(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

func isRunDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, rundir.MetaFile))
	return err == nil && st.Mode().IsRegular()
}

func holdsRunDir(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.IsDir() && isRunDir(filepath.Join(dir, e.Name())) })
}
