package main

import (
	"strings"
	"testing"
)

func TestFlagTyposGetASuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--lod", "3s"}, "run: unknown flag: --lod; did you mean --load?"},
		{[]string{"report", "--formt", "json", "x"}, "report: unknown flag: --formt; did you mean --format?"},
		{[]string{"sensors", "--log-levl", "debug"}, "sensors: unknown flag: --log-levl; did you mean --log-level?"},
		{[]string{"run", "--frobnicate"}, "run: unknown flag: --frobnicate (see heatsink run --help)"},
		{[]string{"sensors", "--log-level", "loud"}, `--log-level: log level "loud": want one of debug, info, warn, error`},
		{[]string{"sensors", "--log-format", "text"}, `--log-format: log format "text": want one of auto, human, json, logfmt`},
	} {
		root := newRootCmd()
		root.SetArgs(tc.args)
		root.SetOut(&strings.Builder{})
		err := root.Execute()
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"load", "load", 0}, {"lod", "load", 1}, {"formt", "format", 1}, {"cooldwon", "cooldown", 2}, {"", "abc", 3}} {
		if d := editDistance(tc.a, tc.b); d != tc.d {
			t.Errorf("%q %q: %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}
