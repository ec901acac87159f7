// Package secret holds credentials from configuration (SNMP communities,
// tokens, passwords) so that they are never printed or logged.
//
// In YAML a secret is written as {env: NAME}, {file: PATH} or, discouraged, a
// literal string. Its String, JSON and YAML forms are redacted.
package secret

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"
)

// Value is a secret and where it came from.
type Value struct {
	Env  string `yaml:"env,omitempty"`
	File string `yaml:"file,omitempty"`
	v    string
	set  bool
}

// Literal returns a secret holding s; for tests and flags.
func Literal(s string) Value { return Value{v: s, set: true} }

// FromFile returns a secret read from path, trimmed of surrounding white space.
func FromFile(path string) (Value, error) {
	s := Value{File: path}
	return s, s.Resolve()
}

// Reveal returns the secret itself. Call it only where the secret is used.
func (s Value) Reveal() string { return s.v }

// IsSet reports whether a secret was given.
func (s Value) IsSet() bool { return s.set || s.Env != "" || s.File != "" }

// Resolve reads the secret from its environment variable or file.
func (s *Value) Resolve() error {
	switch {
	case s.Env != "" && s.File != "":
		return errors.New("secret: give env or file, not both")
	case s.Env != "":
		v, ok := os.LookupEnv(s.Env)
		if !ok {
			return fmt.Errorf("secret: environment variable %s is not set", s.Env)
		}
		s.v, s.set = v, true
	case s.File != "":
		v, err := readFile(s.File)
		if err != nil {
			return fmt.Errorf("secret: %w", err)
		}
		s.v, s.set = v, true
	}
	return nil
}

// MaxFileSize is the most a {file: PATH} secret may hold: a secret is a
// token or passphrase, and reading a wrong path (/dev/zero, a log) whole
// ran heatsink out of memory.
const MaxFileSize = 64 << 10

// pipeWait bounds how long a pipe's writer may take to finish the secret.
const pipeWait = 5 * time.Second

// readFile reads a secret from a regular file or a pipe (--token-file
// <(pass show x)), trimmed of surrounding white space. Anything else (a
// device, a directory, a socket) is refused before it is read: /dev/zero
// never ends, and a terminal would wait for typing.
func readFile(path string) (string, error) {
	// O_NONBLOCK because opening a FIFO for reading waits until a writer
	// opens it, forever if none does. It changes nothing for regular files.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	tooLarge := fmt.Errorf("%s is larger than %d KiB; a secret file holds one token or passphrase", path, MaxFileSize>>10)
	pipe := st.Mode()&os.ModeNamedPipe != 0
	switch {
	case st.Mode().IsRegular():
		if st.Size() > MaxFileSize {
			return "", tooLarge
		}
	case pipe:
		// A pipe is polled, so a writer that never finishes cannot hang
		// startup; a file without this support reads on regardless.
		_ = f.SetReadDeadline(time.Now().Add(pipeWait))
	default:
		return "", fmt.Errorf("%s: not a regular file (%s); give the file that holds the secret", path, st.Mode().Type())
	}
	// One byte past the limit tells a file at the limit from a longer one,
	// and bounds a file that grows, or a pipe, while it is read.
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileSize {
		return "", tooLarge
	}
	if pipe && len(b) == 0 {
		// Opened without waiting, a FIFO with no writer reads as empty.
		return "", fmt.Errorf("%s: a pipe that nothing was written to", path)
	}
	return strings.TrimSpace(string(b)), nil
}

// String never shows the secret.
func (s Value) String() string {
	switch {
	case s.Env != "":
		return "<secret from $" + s.Env + ">"
	case s.File != "":
		return "<secret from " + s.File + ">"
	case s.set:
		return "<secret>"
	}
	return "<unset>"
}

// GoString keeps %#v from printing the secret.
func (s Value) GoString() string { return s.String() }

// MarshalJSON redacts the secret.
func (s Value) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%q", s.String())), nil }

// MarshalYAML redacts the secret.
func (s Value) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalYAML accepts a literal scalar or a mapping with env or file.
func (s *Value) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.v, s.set = n.Value, true
		return nil
	}
	type plain struct {
		Env  string `yaml:"env"`
		File string `yaml:"file"`
	}
	var p plain
	dec := n.Decode
	if err := dec(&p); err != nil {
		return err
	}
	if p.Env == "" && p.File == "" {
		return fmt.Errorf("line %d: secret needs env or file", n.Line)
	}
	s.Env, s.File = p.Env, p.File
	return nil
}

// EnvNames returns the environment variables the {env: NAME} secrets
// anywhere in v (a configuration: structs, pointers, slices, maps,
// interfaces) are read from, sorted and without repeats.
func EnvNames(v any) []string {
	seen := map[string]bool{}
	var walk func(reflect.Value, int)
	walk = func(r reflect.Value, depth int) {
		if depth > 32 || !r.IsValid() {
			return
		}
		if r.Type() == reflect.TypeFor[Value]() {
			if name := r.FieldByName("Env").String(); name != "" {
				seen[name] = true
			}
			return
		}
		switch r.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !r.IsNil() {
				walk(r.Elem(), depth+1)
			}
		case reflect.Struct:
			for i := range r.NumField() {
				walk(r.Field(i), depth+1)
			}
		case reflect.Slice, reflect.Array:
			for i := range r.Len() {
				walk(r.Index(i), depth+1)
			}
		case reflect.Map:
			for it := r.MapRange(); it.Next(); {
				walk(it.Value(), depth+1)
			}
		}
	}
	walk(reflect.ValueOf(v), 0)
	return slices.Sorted(maps.Keys(seen))
}

// Environ returns environ (KEY=value entries, as os.Environ gives) without
// the variables named in drop: the environment for a child process, which
// must not inherit the secrets heatsink read from its own environment.
func Environ(environ, drop []string) []string {
	if len(drop) == 0 {
		return environ
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			out = append(out, kv)
		}
	}
	return out
}
