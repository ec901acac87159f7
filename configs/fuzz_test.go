package configs_test

import (
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/configs"
	_ "github.com/heatsink-hpc/heatsink/node" // registers every source and section
)

// FuzzParse: any input is a configuration or an error that names the file;
// never a panic, whatever yaml.v3 reports and however keyError rewrites it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"interval: 1s\n", "interval: soon\nintervall: 2s\n", "sources:\n  hwmon: {disabled: maybe}\n",
		"runner:\n  watch:\n    - {measurement: gpu, fild: temp_c}\n", "a: [1\n", "- x\n- y: {z: [1, 2]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := configs.Parse("c.yaml", b)
		if err == nil && c == nil {
			t.Fatal("no configuration and no error")
		}
		if err != nil && !strings.Contains(err.Error(), "c.yaml") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
