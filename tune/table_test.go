package tune

import (
	"context"
	"strings"
	"testing"
)

func TestLoadTable(t *testing.T) {
	s, err := LoadSpace("testdata/syr2k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		want       map[string]float64 // "ti,tj,tk,interchange,pack_a,pack_b" at n=60 -> min_s
		wantErr    string
	}{
		{name: "comments skipped", path: "testdata/table/comments.csv",
			want: map[string]float64{"32,32,32,false,false,false": 0.5, "4,8,16,true,false,true": 0.25}},
		{name: "gzipped", path: "testdata/table/comments.csv.gz",
			want: map[string]float64{"32,32,32,false,false,false": 0.5, "4,8,16,true,false,true": 0.25}},
		{name: "line counts comments", path: "testdata/table/badobjective.csv",
			wantErr: `testdata/table/badobjective.csv:4: objective min_s: "fast" is not a number`},
		{name: "missing", path: "testdata/table/none.csv.gz", wantErr: "no such file"},
		{name: "gzip header checked", path: "testdata/table/notgzip.csv.gz", wantErr: "read table testdata/table/notgzip.csv.gz: gzip: invalid header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := LoadTable(c.path, s, "min_s")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tab.Ranked(Task{"n": 60}, false)); got != len(c.want) {
				t.Errorf("%d configurations at n=60, want %d", got, len(c.want))
			}
			for cfg, y := range c.want {
				vals := map[string]string{}
				for i, v := range strings.Split(cfg, ",") {
					vals[s.Params[i].Name] = v
				}
				conf, err := s.Parse(vals)
				if err != nil {
					t.Fatal(err)
				}
				r, err := tab.Evaluate(context.Background(), Task{"n": 60}, conf)
				if err != nil || r.Objective != y {
					t.Errorf("%s: %v, %v; want %g", cfg, r.Objective, err, y)
				}
			}
		})
	}
}
