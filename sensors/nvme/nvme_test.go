package nvme

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

var stamp = time.Unix(1700000000, 0)

func discover(t *testing.T, root string, spec filter.Spec) *Source {
	t.Helper()
	return fixture.Discover(t, New, root, spec)
}

func render(p point.Point) string {
	var tags, fields []string
	for _, t := range p.Tags {
		tags = append(tags, t.Key+"="+t.Value)
	}
	for _, f := range p.Fields {
		v, _ := point.Float(f.Value)
		fields = append(fields, fmt.Sprintf("%s=%g", f.Key, v))
	}
	return p.Measurement + "," + strings.Join(tags, ",") + ": " + strings.Join(fields, " ")
}

func TestNvmeReadsBothHwmonLayouts(t *testing.T) {
	tests := []struct {
		node string
		want []string
		desc string
	}{
		{"intel-node", []string{
			"nvme,device=nvme0,model=Samsung SSD 970 EVO Plus 1TB,serial=S4EWNX0N812345A,sensor=Composite: temp_c=38.85 warn_c=81.85 crit_c=84.85",
			// An unset threshold reads 65535 K: absent, not 65261.85 °C.
			"nvme,device=nvme0,model=Samsung SSD 970 EVO Plus 1TB,serial=S4EWNX0N812345A,sensor=Sensor 1: temp_c=38.85",
			"nvme,device=nvme0,model=Samsung SSD 970 EVO Plus 1TB,serial=S4EWNX0N812345A,sensor=Sensor 2: temp_c=41.85",
		}, "nvme0 Samsung SSD 970 EVO Plus 1TB (serial S4EWNX0N812345A), hwmon2: Composite, Sensor 1, Sensor 2"},
		// Older kernels: hwmon under the PCI function, not the controller.
		{"amd-node", []string{
			"nvme,device=nvme0,model=WDS100T3X0C-00SJG0,serial=20412K801234,sensor=Composite: temp_c=35.85 warn_c=80.85 crit_c=84.85",
		}, "nvme0 WDS100T3X0C-00SJG0 (serial 20412K801234), hwmon1: Composite"},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			s := discover(t, fixture.Sys(tt.node), filter.Spec{})
			pts, err := s.Sample(context.Background(), stamp, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pts {
				got = append(got, render(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("sample:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if d := s.Describe(); len(d) != 1 || d[0] != tt.desc {
				t.Errorf("Describe = %q, want %q", d, tt.desc)
			}
		})
	}
}

func TestNvmeFilters(t *testing.T) {
	s := discover(t, fixture.Sys("intel-node"), filter.Spec{SensorExclude: "^Sensor"})
	pts, _ := s.Sample(context.Background(), stamp, nil)
	if len(pts) != 1 || pts[0].Tag("sensor") != "Composite" {
		t.Errorf("Sensor N excluded: %v", pts)
	}
	f, _ := filter.New(filter.Spec{DeviceInclude: "^WDS"}) // by model
	if err := New(fixture.Sys("intel-node"), f).Discover(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("no drive kept: %v", err)
	}
	s = discover(t, fixture.Sys("amd-node"), filter.Spec{DeviceInclude: "^WDS"})
	if pts, _ := s.Sample(context.Background(), stamp, nil); len(pts) != 1 {
		t.Errorf("drive kept by model: %v", pts)
	}
}

func TestNvmeErrorsAndHotUnplug(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	s := discover(t, sys, filter.Spec{})
	s.SetRefresh(1)
	hw := filepath.Join(sys, "class/nvme/nvme0/hwmon2")
	os.WriteFile(filepath.Join(hw, "temp2_input"), []byte("\n"), 0o644)
	os.WriteFile(filepath.Join(hw, "temp1_crit"), []byte("hot\n"), 0o644)
	pts, err := s.Sample(context.Background(), stamp, nil)
	var got []string
	for _, p := range pts {
		got = append(got, render(p))
	}
	want := []string{
		"nvme,device=nvme0,model=Samsung SSD 970 EVO Plus 1TB,serial=S4EWNX0N812345A,sensor=Composite: temp_c=38.85 warn_c=81.85",
		"nvme,device=nvme0,model=Samsung SSD 970 EVO Plus 1TB,serial=S4EWNX0N812345A,sensor=Sensor 2: temp_c=41.85",
	}
	if !slices.Equal(got, want) {
		t.Errorf("points:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range []string{
		"nvme nvme0 temp2: parse " + filepath.Join(hw, "temp2_input") + ": empty value",
		"nvme nvme0 temp1: parse " + filepath.Join(hw, "temp1_crit") + `: "hot" is not a decimal integer`,
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
	// The drive is pulled: one error, no points, and no drive left after.
	os.RemoveAll(filepath.Join(sys, "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0"))
	os.Remove(filepath.Join(sys, "class/nvme/nvme0"))
	pts, err = s.Sample(context.Background(), stamp, nil)
	if len(pts) != 0 || err == nil || !strings.Contains(err.Error(), "nvme nvme0 vanished") || strings.Contains(err.Error(), "\n") {
		t.Errorf("unplugged: %d points, %v; want one vanished error", len(pts), err)
	}
	if _, err = s.Sample(context.Background(), stamp, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("after the unplug: %v, want ErrUnsupported (no drive)", err)
	}
}

func TestNvmeWithoutHwmon(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	os.RemoveAll(filepath.Join(sys, "class/nvme/nvme0/hwmon2"))
	s := New(sys, filter.Filter{})
	err := s.Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Discover: %v, want ErrUnsupported", err)
	}
	if d := s.Describe(); len(d) != 1 || !strings.Contains(d[0], "no hwmon node (kernel without CONFIG_NVME_HWMON?)") {
		t.Errorf("Describe = %q", d)
	}
	err = New(filepath.Join(t.TempDir(), "sys"), filter.Filter{}).Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no nvme class") {
		t.Errorf("no class: %v", err)
	}
}
