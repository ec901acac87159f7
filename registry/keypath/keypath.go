// Package keypath is the error a configuration section returns for a value
// that decoded but makes no sense. It carries the chain of keys that leads
// to the value, so that the configuration loader (package configs) can name
// the file and the line. Every section (sinks.influx, sources.pdus, runner,
// alerts...) returns the same type, so one loader reads them all. It is a
// leaf of its own, so a section's package (which registers through the
// registry) need not import the YAML loader; it lives under registry, not
// configs, because the registry's lists return it and the registry must
// stay below the loader (it imports nothing of heatsink but point and this).
package keypath

import "strings"

// Error is a configuration value that makes no sense. Path leads to it
// from the section that returned it (["rules", "3", "threshold"]), sequence
// indices written as decimal strings; Msg says what is wrong with it. It
// implements configs.PathError.
type Error struct {
	Path []string
	Msg  string
}

// New returns the error msg for the value at path.
func New(msg string, path ...string) *Error { return &Error{Path: path, Msg: msg} }

func (e *Error) Error() string { return strings.Join(e.Path, ".") + ": " + e.Msg }

// ConfigPath returns the keys leading to the bad value.
func (e *Error) ConfigPath() []string { return e.Path }

// ConfigMessage says what is wrong with the value, without its path.
func (e *Error) ConfigMessage() string { return e.Msg }
