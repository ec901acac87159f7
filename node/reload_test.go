package node

import (
	"fmt"
	"testing"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/registry"
)

func kindNamed(t *testing.T, name string) registry.SourceKind {
	t.Helper()
	for _, k := range registry.SourceKinds() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no source kind %s registered", name)
	return registry.SourceKind{}
}

// A reload keeps the running source of every name whose part of the
// configuration did not change, down to one PDU of a list, and takes the
// fresh one otherwise.
func TestReloadKeepsTheSourcesWhosePartDidNotChange(t *testing.T) {
	pdu := "  pdus:\n    - {name: a, target: 10.0.0.1, preset: apc-rpdu2}\n    - {name: b, target: %s, preset: apc-rpdu2}\n"
	parse := func(sys, bTarget string) *configs.Config {
		c, err := configs.Parse("n.yaml", []byte("sysfs_root: "+sys+"\nsources:\n  hwmon: {sensor_exclude: fan}\n"+
			fmt.Sprintf(pdu, bTarget)))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	hw, pdus := kindNamed(t, "hwmon"), kindNamed(t, "pdus")
	mk := func() []built {
		return []built{
			{&stubSource{name: "hwmon"}, hw}, {&stubSource{name: "pdu:a"}, pdus}, {&stubSource{name: "pdu:b"}, pdus},
		}
	}
	tests := []struct {
		name     string
		old, cfg *configs.Config
		kept     []bool // per source: the running one kept
	}{
		{"nothing changed", parse("/sys", "10.0.0.2"), parse("/sys", "10.0.0.2"), []bool{true, true, true}},
		{"one PDU of two", parse("/sys", "10.0.0.2"), parse("/sys", "10.0.0.3"), []bool{true, true, false}},
		{"the roots", parse("/sys", "10.0.0.2"), parse("/other", "10.0.0.2"), []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, fresh := mk(), mk()
			out, added, kept := keepUnchanged(tt.old, tt.cfg, cur, fresh)
			nKept := 0
			for i, b := range out {
				if want := cur[i].src; tt.kept[i] != (b.src == want) {
					t.Errorf("source %s: kept %v, want %v", b.src.Name(), b.src == want, tt.kept[i])
				}
				if tt.kept[i] {
					nKept++
				}
			}
			if kept != nKept || len(added) != len(out)-nKept {
				t.Errorf("kept %d, added %d; want %d and %d", kept, len(added), nKept, len(out)-nKept)
			}
		})
	}
}

func TestReplaceSinkRemovesReplacesAndAppends(t *testing.T) {
	a, b, c := &nopSink{"a"}, &nopSink{"b"}, &nopSink{"c"}
	tests := []struct {
		name       string
		prev, next collectors.Sink
		want       string
	}{
		{"replace", b, c, "acx"}, {"remove", b, nil, "ax"}, {"append", nil, c, "abxc"}, {"neither", nil, nil, "abx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			for _, s := range replaceSink([]collectors.Sink{a, b, &nopSink{"x"}}, tt.prev, tt.next) {
				got += s.(*nopSink).id
			}
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

type nopSink struct{ id string }

func (*nopSink) Write([]point.Point) error { return nil }
func (*nopSink) Flush() error              { return nil }
func (*nopSink) Close() error              { return nil }
