package collectors

import (
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

func streamPoints() []point.Point {
	t := time.Unix(1700000000, 0)
	gpu := point.New("gpu", t)
	gpu.AddTag("gpu", "0").AddFloat("temp_c", 35.5).AddUint("energy_j", 12)
	empty := point.New("mem", t) // no fields: line protocol cannot hold it
	load := point.New("load", t)
	load.AddFloat("load1", 0.5)
	return []point.Point{gpu, empty, load}
}

func TestStreamSinkWritesLineProtocolAndJSON(t *testing.T) {
	for _, tt := range []struct {
		format string
		want   string
	}{
		{"lp", "gpu,gpu=0 temp_c=35.5,energy_j=12u 1700000000000000000\nload load1=0.5 1700000000000000000\n"},
		{"json", `{"measurement":"gpu","tags":{"gpu":"0"},"fields":{"energy_j":12,"temp_c":35.5},"time":"` +
			time.Unix(1700000000, 0).Format(time.RFC3339Nano) + `"}` + "\n" +
			`{"measurement":"mem","tags":{},"fields":{},"time":"` + time.Unix(1700000000, 0).Format(time.RFC3339Nano) + `"}` + "\n" +
			`{"measurement":"load","tags":{},"fields":{"load1":0.5},"time":"` + time.Unix(1700000000, 0).Format(time.RFC3339Nano) + `"}` + "\n"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			var out strings.Builder
			s, err := NewStreamSink(&out, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Write(streamPoints())
			if tt.format == "lp" && (err == nil || !strings.Contains(err.Error(), "mem: no fields")) {
				t.Errorf("Write = %v, want the point without fields reported", err)
			}
			if tt.format == "json" && err != nil {
				t.Errorf("Write = %v", err)
			}
			if out.String() != tt.want {
				t.Errorf("wrote\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
	if _, err := NewStreamSink(&strings.Builder{}, "csv"); err == nil || !strings.Contains(err.Error(), `"csv"`) {
		t.Errorf("format csv: %v", err)
	}
}
