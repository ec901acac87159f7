package secret

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestSecretsAreNeverPrinted(t *testing.T) {
	t.Setenv("HS_TEST_TOKEN", "hunter2")
	dir := t.TempDir()
	file := filepath.Join(dir, "tok")
	os.WriteFile(file, []byte("s3cr3t\n"), 0o600)
	var cfg struct {
		A Value `yaml:"a"`
		B Value `yaml:"b"`
		C Value `yaml:"c"`
	}
	doc := fmt.Sprintf("a: {env: HS_TEST_TOKEN}\nb: {file: %s}\nc: plain\n", file)
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Value{&cfg.A, &cfg.B, &cfg.C} {
		if err := s.Resolve(); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.A.Reveal() != "hunter2" || cfg.B.Reveal() != "s3cr3t" || cfg.C.Reveal() != "plain" {
		t.Fatalf("resolved %q %q %q", cfg.A.Reveal(), cfg.B.Reveal(), cfg.C.Reveal())
	}
	j, _ := json.Marshal(cfg)
	y, _ := yaml.Marshal(cfg)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg.A), string(j), string(y)} {
		for _, s := range []string{"hunter2", "s3cr3t", "plain"} {
			if strings.Contains(out, s) {
				t.Errorf("secret %q printed in %s", s, out)
			}
		}
	}
}

func TestMissingSecretIsAnError(t *testing.T) {
	s := Value{Env: "HS_TEST_SURELY_UNSET"}
	if err := s.Resolve(); err == nil || !strings.Contains(err.Error(), "HS_TEST_SURELY_UNSET") {
		t.Errorf("err = %v", err)
	}
}

func TestEnvNamesFindsEverySecretReadFromTheEnvironment(t *testing.T) {
	type section struct {
		Token Value
		Pass  *Value
		Many  []Value
		ByKey map[string]any
	}
	v := struct {
		A section
		B any
	}{
		A: section{Token: Value{Env: "TOKEN"}, Pass: &Value{Env: "PASS"}, Many: []Value{{File: "/f"}, {Env: "TOKEN"}},
			ByKey: map[string]any{"x": Value{Env: "MAPPED"}}},
		B: &section{Token: Value{Env: "IFACE"}},
	}
	got := strings.Join(EnvNames(v), ",")
	if want := "IFACE,MAPPED,PASS,TOKEN"; got != want {
		t.Errorf("EnvNames = %s, want %s", got, want)
	}
	env := Environ([]string{"TOKEN=a", "PATH=/bin", "PASS=b=c", "TOKENX=d"}, []string{"TOKEN", "PASS"})
	if got := strings.Join(env, " "); got != "PATH=/bin TOKENX=d" {
		t.Errorf("Environ = %s", got)
	}
}
