package debian

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// needs skips the test, saying which, when a tool it runs is missing
// (scripts/deps.sh installs them all, CI runs it first).
func needs(t *testing.T) {
	t.Helper()
	gobin := filepath.Join(goEnv(t, "GOPATH"), "bin")
	t.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+gobin)
	for _, tool := range []string{"dpkg", "dpkg-deb", "nfpm", "systemd-analyze", "objdump", "git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (scripts/deps.sh installs it): %v", tool, err)
		}
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skipf("bash-completion is not installed (scripts/deps.sh installs it): %v", err)
	}
	if os.Getuid() != 0 {
		t.Skip("dpkg installs files owned by root: run as root (CI does)")
	}
}

const bashCompletion = "/usr/share/bash-completion/bash_completion"

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// The package as a site gets it: scripts/package.sh builds it, dpkg
// installs it into a scratch root (a root of its own, so this machine's
// /usr is untouched), what it installed runs, systemd accepts its unit, and
// dpkg removes it leaving only the conffile, then purges it leaving
// nothing. The maintainer scripts run outside a chroot
// (--force-script-chrootless) with DPKG_ROOT set, as dpkg runs them for a
// root that has no shell of its own; that is why they honour DPKG_ROOT.
func TestPackageInstallsRunsAndRemovesCleanly(t *testing.T) {
	needs(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(run(t, repo, "scripts/package.sh", t.TempDir()))
	deb := out[len(out)-1]
	version := checkDeb(t, deb)

	root := baseRoot(t)
	base := tree(t, root)
	dpkg := func(args ...string) string {
		return run(t, root, "dpkg", append([]string{"--root=" + root, "--log=" + filepath.Join(t.TempDir(), "dpkg.log"), "--force-script-chrootless"}, args...)...)
	}
	// The scratch root has no libc6 package: its dependency is the one
	// thing dpkg is told to overlook.
	dpkg("--force-depends", "--install", deb)
	checkInstalled(t, repo, root, version)

	// A spool, as the agent leaves one; purge takes it.
	if err := os.MkdirAll(filepath.Join(root, "var/lib/heatsink/spool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/heatsink/spool/0001.lp"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dpkg("--remove", "heatsink")
	left := added(base, tree(t, root))
	want := []string{"etc", "etc/heatsink", "etc/heatsink/heatsink.yaml", "var/lib/heatsink", "var/lib/heatsink/spool", "var/lib/heatsink/spool/0001.lp"}
	if !slices.Equal(left, want) {
		t.Errorf("after dpkg --remove the root holds %q beside its base, want the conffile and the state: %q", left, want)
	}
	dpkg("--purge", "heatsink")
	if left := added(base, tree(t, root)); len(left) > 0 {
		t.Errorf("after dpkg --purge the root still holds %q", left)
	}
}

// checkDeb checks the package's name, control fields, conffiles and
// contents, and returns its version.
func checkDeb(t *testing.T, deb string) string {
	t.Helper()
	field := func(name string) string {
		return strings.TrimSpace(run(t, "", "dpkg-deb", "--field", deb, name))
	}
	version := field("Version")
	if want := "heatsink_" + version + "_amd64.deb"; filepath.Base(deb) != want {
		t.Errorf("package file %s, want %s", filepath.Base(deb), want)
	}
	if got := field("Package") + " " + field("Architecture"); got != "heatsink amd64" {
		t.Errorf("Package and Architecture %q, want heatsink amd64", got)
	}
	if d := field("Depends"); !regexp.MustCompile(`^libc6 \(>= 2\.[0-9]+\)$`).MatchString(d) {
		t.Errorf("Depends %q, want libc6 (>= 2.N) from the binary's glibc symbols", d)
	}
	if c := strings.TrimSpace(run(t, "", "dpkg-deb", "--info", deb, "conffiles")); c != "/etc/heatsink/heatsink.yaml" {
		t.Errorf("conffiles %q, want /etc/heatsink/heatsink.yaml", c)
	}
	contents := map[string]string{} // path: mode
	for _, l := range strings.Split(run(t, "", "dpkg-deb", "--contents", deb), "\n") {
		if f := strings.Fields(l); len(f) == 6 {
			contents[strings.TrimPrefix(f[5], "./")] = f[0]
		}
	}
	for path, mode := range map[string]string{
		"usr/bin/heatsink": "-rwxr-xr-x",
		"usr/lib/systemd/system/heatsink-collect.service":     "-rw-r--r--",
		"etc/heatsink/heatsink.yaml":                          "-rw-r--r--",
		"usr/lib/heatsink/slurm/prolog.sh":                    "-rwxr-xr-x",
		"usr/lib/heatsink/slurm/epilog.sh":                    "-rwxr-xr-x",
		"usr/lib/heatsink/slurm/epilog-slurmctld.sh":          "-rwxr-xr-x",
		"usr/lib/heatsink/slurm/healthcheck.sh":               "-rwxr-xr-x",
		"usr/share/man/man1/heatsink.1.gz":                    "-rw-r--r--",
		"usr/share/man/man1/heatsink-run.1.gz":                "-rw-r--r--",
		"usr/share/man/man1/heatsink-report.1.gz":             "-rw-r--r--",
		"usr/share/bash-completion/completions/heatsink":      "-rw-r--r--",
		"usr/share/zsh/vendor-completions/_heatsink":          "-rw-r--r--",
		"usr/share/fish/vendor_completions.d/heatsink.fish":   "-rw-r--r--",
		"usr/share/doc/heatsink/copyright":                    "-rw-r--r--",
		"usr/share/heatsink/prometheus/heatsink.rules.yml":    "-rw-r--r--",
		"usr/share/heatsink/grafana/heatsink-prometheus.json": "-rw-r--r--",
	} {
		if got, ok := contents[path]; !ok || got != mode {
			t.Errorf("the package holds %s with mode %q, want %q", path, got, mode)
		}
	}
	if _, ok := contents["usr/share/man/man1/heatsink-man.1.gz"]; ok {
		t.Error("the hidden man command has a page of its own")
	}
	return version
}

// baseRoot is a scratch root with what a Debian system's other packages
// would give the unit (systemd's targets, /bin/kill for ExecReload) and
// dpkg's empty database.
func baseRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "usr/bin", "usr/lib/systemd/system"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("usr/bin", filepath.Join(root, "bin")); err != nil {
		t.Fatal(err)
	}
	kill, err := exec.LookPath("kill")
	if err != nil || !filepath.IsAbs(kill) {
		kill = "/bin/kill"
	}
	copyFile(t, kill, filepath.Join(root, "usr/bin/kill"), 0o755)
	targets, err := filepath.Glob("/usr/lib/systemd/system/*.target")
	if err != nil || len(targets) == 0 {
		t.Skipf("no systemd targets under /usr/lib/systemd/system to verify the unit against (install systemd): %v", err)
	}
	for _, tg := range targets {
		copyFile(t, tg, filepath.Join(root, "usr/lib/systemd/system", filepath.Base(tg)), 0o644)
	}
	return root
}

func copyFile(t *testing.T, from, to string, mode fs.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// tree lists every path under root but dpkg's own database.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "var/lib/dpkg" {
			return filepath.SkipDir
		}
		if rel != "." {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// added is what after holds that base did not.
func added(base, after []string) []string {
	var out []string
	for _, p := range after {
		if !slices.Contains(base, p) {
			out = append(out, p)
		}
	}
	return out
}

// checkInstalled runs what the package installed into root.
func checkInstalled(t *testing.T, repo, root, debVersion string) {
	t.Helper()
	bin := filepath.Join(root, "usr/bin/heatsink")
	var info struct{ Version, Revision string }
	if err := json.Unmarshal([]byte(run(t, root, bin, "version", "--json")), &info); err != nil {
		t.Fatalf("heatsink version --json: %v", err)
	}
	head := strings.TrimSpace(run(t, repo, "git", "rev-parse", "HEAD"))
	if info.Revision != head || !strings.Contains(info.Version, head[:12]) && !strings.HasPrefix(info.Version, "v"+debVersion) {
		t.Errorf("the installed heatsink says version %q revision %q; the checkout is %s, the package %s", info.Version, info.Revision, head, debVersion)
	}
	if !strings.Contains(debVersion, head[:12]) && !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(debVersion) {
		t.Errorf("package version %s names neither a release nor the commit %s", debVersion, head[:12])
	}
	conf, err := os.ReadFile(filepath.Join(root, "etc/heatsink/heatsink.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(filepath.Join(repo, "configs/node.yaml")); !bytes.Equal(conf, want) {
		t.Error("/etc/heatsink/heatsink.yaml is not configs/node.yaml")
	}
	// systemd resolves the unit's commands and dependencies in root: the
	// binary must be where ExecStart says.
	run(t, root, "systemd-analyze", "verify", "--root="+root, "heatsink-collect.service")
	for _, s := range []string{"prolog.sh", "epilog.sh", "epilog-slurmctld.sh", "healthcheck.sh"} {
		path := filepath.Join(root, "usr/lib/heatsink/slurm", s)
		run(t, root, "sh", "-n", path)
		if b, _ := os.ReadFile(path); !strings.Contains(string(b), "\nHEATSINK=/usr/bin/heatsink\n") {
			t.Errorf("%s does not run the packaged /usr/bin/heatsink", s)
		}
	}
	checkManPage(t, filepath.Join(root, "usr/share/man/man1/heatsink-run.1.gz"), "heatsink-run")
	checkBashCompletion(t, root)
}

func checkManPage(t *testing.T, path, name string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	page := string(b)
	if !strings.Contains(page, `.TH "HEATSINK" "1"`) || !strings.Contains(page, "\n"+name+" - ") || !strings.Contains(page, `\fB--workload\fP`) {
		t.Errorf("%s is not the section 1 page of %s with its flags:\n%.400s", path, name, page)
	}
}

// checkBashCompletion completes as bash does with the installed script
// and the installed binary: Tab after `heatsink run --workload ` and after
// `heatsink report ` in a directory with a run.
func checkBashCompletion(t *testing.T, root string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run1", "run.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `source ` + bashCompletion + `
source "$ROOT/usr/share/bash-completion/completions/heatsink"
complete_line() {
	COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<<"$COMP_LINE"
	case "$COMP_LINE" in *" ") COMP_WORDS+=("") ;; esac
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
	__start_heatsink heatsink "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
	echo "${COMPREPLY[*]}"
}
complete_line "heatsink run --workload "
complete_line "heatsink report "
`
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ROOT="+root, "PATH="+filepath.Join(root, "usr/bin")+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash completion: %v", err)
	}
	want := "cpu-stream dgemm ezlda full-w2v ri stream\nrun1\n"
	if string(out) != want {
		t.Errorf("bash completes\n%s\nwant\n%s", out, want)
	}
}
