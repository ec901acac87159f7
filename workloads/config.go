package workloads

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// Defaults of the runner section. They are chosen for air-cooled and immersed
// GPU nodes sampled at 1 Hz, where sensors resolve 1 °C (NVML) to 0.125 °C
// (k10temp): 2 °C above the baseline mean is clear of sensor noise yet close
// enough that the next run starts from the same thermal state.
const (
	DefaultToleranceC  = 2.0
	DefaultHold        = 60 * time.Second
	DefaultCooldownMax = time.Hour
	DefaultNominalMax  = 30 * time.Minute
	DefaultGrace       = 10 * time.Second
)

// DefaultWatch is the selection of temperatures the runner watches when the
// configuration names none: GPU core and memory, CPU packages, cores and dies
// (hwmon classes cpu_package, cpu_core, cpu) and NVMe drives.
func DefaultWatch() []Selector {
	return []Selector{
		{Measurement: schema.GPU, Field: schema.FieldTempC},
		{Measurement: schema.GPU, Field: schema.FieldMemTempC},
		{Measurement: schema.Hwmon, Field: schema.FieldTempC, Tags: map[string]string{"class": "cpu_package|cpu_core|cpu"}},
		{Measurement: schema.NVMe, Field: schema.FieldTempC},
	}
}

// RunnerConfig is the `runner:` section of the configuration: which
// temperatures gate and end the protocol's phases and how closely. A zero
// value (or an absent key) means the default.
type RunnerConfig struct {
	// Watch selects the temperatures `--cooldown auto` and `--wait-nominal`
	// look at; default DefaultWatch.
	Watch []Selector `yaml:"watch"`
	// ToleranceC is how far above its reference (the baseline mean) a watched
	// temperature may be and still count as near its baseline; default 2 °C.
	// (The report's return to idle is measured from the idle maximum.)
	ToleranceC float64 `yaml:"tolerance_c"`
	// Hold is how long every watched temperature must stay within tolerance
	// before auto cooldown or the nominal wait ends; default 60 s.
	Hold time.Duration `yaml:"hold"`
	// CooldownMax ends an auto cooldown that never settles; default 1 h.
	CooldownMax time.Duration `yaml:"cooldown_max"`
	// NominalMax ends a --wait-nominal that never settles; the load then
	// starts anyway and a note event says so; default 30 min.
	NominalMax time.Duration `yaml:"nominal_max"`
	// Grace is how long a stopped job has between SIGTERM and SIGKILL; default 10 s.
	Grace time.Duration `yaml:"grace"`
	// Nominal are absolute limits for --wait-nominal. When any are given they
	// are the reference instead of the baseline, so back-to-back runs start
	// from the same state whatever each one's baseline was.
	Nominal []Limit `yaml:"nominal"`
}

// Selector picks series by measurement, field and tags. Tag values are
// regular expressions matched against the whole tag value.
type Selector struct {
	Measurement string            `yaml:"measurement"`
	Field       string            `yaml:"field"`
	Tags        map[string]string `yaml:"tags,omitempty"`
}

// Limit is an absolute upper limit for the series a selector picks.
type Limit struct {
	Selector `yaml:",inline"`
	MaxC     float64 `yaml:"max_c"`
}

// Fill sets the defaults of unset options.
func (c *RunnerConfig) Fill() {
	if len(c.Watch) == 0 {
		c.Watch = DefaultWatch()
	}
	if c.ToleranceC == 0 {
		c.ToleranceC = DefaultToleranceC
	}
	if c.Hold == 0 {
		c.Hold = DefaultHold
	}
	if c.CooldownMax == 0 {
		c.CooldownMax = DefaultCooldownMax
	}
	if c.NominalMax == 0 {
		c.NominalMax = DefaultNominalMax
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
}

// ConfigError is a runner option that makes no sense. It implements the
// configs package's PathError, so the loader names the file and line.
type ConfigError = keypath.Error

// Validate checks the section after Fill; errors name the offending key.
func (c *RunnerConfig) Validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"hold", c.Hold}, {"cooldown_max", c.CooldownMax}, {"nominal_max", c.NominalMax}, {"grace", c.Grace}} {
		if d.v < 0 {
			return &ConfigError{Path: []string{d.key}, Msg: fmt.Sprintf("%v is negative", d.v)}
		}
	}
	if c.ToleranceC < 0 {
		return &ConfigError{Path: []string{"tolerance_c"}, Msg: fmt.Sprintf("%g is negative", c.ToleranceC)}
	}
	if c.CooldownMax > 0 && c.Hold > c.CooldownMax {
		return &ConfigError{Path: []string{"hold"}, Msg: fmt.Sprintf("%v is longer than cooldown_max (%v): auto cooldown could never settle", c.Hold, c.CooldownMax)}
	}
	for i, s := range c.Watch {
		if err := s.validate(); err != nil {
			err.Path = append([]string{"watch", strconv.Itoa(i)}, err.Path...)
			return err
		}
	}
	for i, l := range c.Nominal {
		if err := l.validate(); err != nil {
			err.Path = append([]string{"nominal", strconv.Itoa(i)}, err.Path...)
			return err
		}
		if l.MaxC <= -273.15 || l.MaxC > 200 {
			return &ConfigError{Path: []string{"nominal", strconv.Itoa(i), schema.FieldMaxC}, Msg: fmt.Sprintf("%g °C is not a temperature a sensor can report", l.MaxC)}
		}
	}
	return nil
}

func (s *Selector) validate() *ConfigError {
	if s.Measurement == "" {
		return &ConfigError{Path: []string{"measurement"}, Msg: "required"}
	}
	if s.Field == "" {
		return &ConfigError{Path: []string{"field"}, Msg: "required"}
	}
	for k, re := range s.Tags {
		if _, err := regexp.Compile("^(?:" + re + ")$"); err != nil {
			return &ConfigError{Path: []string{"tags", k}, Msg: fmt.Sprintf("bad regular expression: %v", err)}
		}
	}
	return nil
}

// matcher is a compiled Selector.
type matcher struct {
	measurement, field string
	tags               []tagMatch
}

type tagMatch struct {
	key string
	re  *regexp.Regexp
}

// compileSelectors compiles validated selectors; an invalid one is an error
// naming it.
func compileSelectors(sels []Selector) ([]matcher, error) {
	out := make([]matcher, 0, len(sels))
	for _, s := range sels {
		m := matcher{measurement: s.Measurement, field: s.Field}
		keys := make([]string, 0, len(s.Tags))
		for k := range s.Tags {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			re, err := regexp.Compile("^(?:" + s.Tags[k] + ")$")
			if err != nil {
				return nil, fmt.Errorf("selector %s.%s tag %s: %w", s.Measurement, s.Field, k, err)
			}
			m.tags = append(m.tags, tagMatch{k, re})
		}
		out = append(out, m)
	}
	return out, nil
}
