package release

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Set by make test-package: the dir the packages were written to, and the
// version they carry.
const (
	packagesEnv = "APISERVER_LITE_PACKAGES"
	versionEnv  = "APISERVER_LITE_VERSION"
)

// Where the sources are, relative to this module, and where the package
// puts things.
const (
	unitsDir       = "../../../systemd"
	scriptsDir     = "scripts"
	binaryPath     = "/usr/bin/apiserver-lite"
	unitBinary     = "/usr/local/bin/apiserver-lite" // what the source units name
	systemdDir     = "/usr/lib/systemd/system/"
	configPath     = "/etc/apiserver-lite/config.yaml"
	docDir         = "/usr/share/doc/apiserver-lite/"
	mainUnit       = "apiserver-lite.service"
	keygenUnit     = "apiserver-lite-keygen.service"
	stateKeyFlag   = "LoadCredentialEncrypted=state-key:"
	modeFile       = 0o644
	modeExecutable = 0o755
)

// startsDaemon matches a systemctl call that would start a unit; an
// upgrade's try-restart of a daemon already running does not.
var startsDaemon = regexp.MustCompile(`systemctl\s+(start|restart|reload-or-restart|enable\s+--now)\b`)

// wantEntries are the files of a package of kind (deb or rpm), by path,
// with their modes and config-file marks: exactly these, no more.
func wantEntries(t *testing.T, kind string) map[string]entry {
	t.Helper()
	want := map[string]entry{
		binaryPath: {mode: modeExecutable},
		configPath: {mode: modeFile, config: true},
	}
	for _, u := range sourceUnits(t) {
		want[systemdDir+u] = entry{mode: modeFile}
	}
	for _, d := range []string{"README.md", "operations.md", "security.md", "monitoring/alerts.yaml", "monitoring/dashboard.json"} {
		want[docDir+d] = entry{mode: modeFile}
	}
	if kind == "deb" {
		want[docDir+"copyright"] = entry{mode: modeFile}
	} else {
		want["/usr/share/licenses/apiserver-lite/LICENSE"] = entry{mode: modeFile}
	}
	return want
}

// sourceUnits names every unit in systemd/.
func sourceUnits(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(unitsDir, "apiserver-lite*"))
	if err != nil || len(paths) < 4 {
		t.Fatalf("units in %s: got %v (%v), want the daemon's, the key generator's and the credential units", unitsDir, paths, err)
	}
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

func TestPackages(t *testing.T) {
	dir := os.Getenv(packagesEnv)
	if dir == "" {
		t.Skipf("%s is not set: make test-package builds the packages and runs this", packagesEnv)
	}
	for _, tc := range []struct {
		kind string
		read func(string) (*pkg, error)
	}{{"deb", readDeb}, {"rpm", readRPM}} {
		t.Run(tc.kind, func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(dir, "*."+tc.kind))
			if len(files) != 1 {
				t.Fatalf("got %d .%s files in %s (%v), want 1", len(files), tc.kind, dir, files)
			}
			p, err := tc.read(files[0])
			if err != nil {
				t.Fatalf("%s: %v", files[0], err)
			}
			checkEntries(t, p, wantEntries(t, tc.kind))
			checkUnits(t, p)
			checkScripts(t, p)
			checkBinary(t, p)
		})
	}
}

// checkEntries wants exactly the files of want, owned by root, with their
// modes and config marks, and nothing under /var: the data is the
// daemon's, never the package's, so removing the package leaves it.
func checkEntries(t *testing.T, p *pkg, want map[string]entry) {
	t.Helper()
	for path, w := range want {
		got, ok := p.entries[path]
		switch {
		case !ok:
			t.Errorf("%s: missing", path)
		case got.dir:
			t.Errorf("%s: got a directory, want a file", path)
		case got.mode != w.mode:
			t.Errorf("%s: got mode %04o, want %04o", path, got.mode, w.mode)
		case got.config != w.config:
			t.Errorf("%s: got config file %v, want %v", path, got.config, w.config)
		case got.owner != "root:root":
			t.Errorf("%s: got owner %s, want root:root", path, got.owner)
		}
	}
	for path, e := range p.entries {
		if _, ok := want[path]; !ok && !e.dir {
			t.Errorf("%s: in the package, want it not", path)
		}
		if strings.HasPrefix(path, "/var/") {
			t.Errorf("%s: the package owns data, want none (removal must leave it)", path)
		}
		if e.dir && e.mode&0o022 != 0 {
			t.Errorf("%s: got a directory of mode %04o, want none writable by group or others", path, e.mode)
		}
	}
}

// checkUnits wants each unit as in systemd/ with the binary at /usr/bin,
// and the key generator to create exactly the key the daemon loads.
func checkUnits(t *testing.T, p *pkg) {
	t.Helper()
	for _, u := range sourceUnits(t) {
		src, err := os.ReadFile(filepath.Join(unitsDir, u))
		if err != nil {
			t.Fatal(err)
		}
		e, ok := p.entries[systemdDir+u]
		if !ok {
			continue // checkEntries says so
		}
		if want := bytes.ReplaceAll(src, []byte(unitBinary), []byte(binaryPath)); !bytes.Equal(e.data, want) {
			t.Errorf("%s: got\n%s\nwant the source unit with %s for %s", u, e.data, binaryPath, unitBinary)
		}
	}
	main, keygen := p.entries[systemdDir+mainUnit], p.entries[systemdDir+keygenUnit]
	if main == nil || keygen == nil {
		return
	}
	if !regexp.MustCompile(`(?m)^ExecStart=` + regexp.QuoteMeta(binaryPath) + ` `).Match(main.data) {
		t.Errorf("%s: ExecStart does not run %s", mainUnit, binaryPath)
	}
	key := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(stateKeyFlag) + `(\S+)$`).FindSubmatch(main.data)
	if key == nil {
		t.Fatalf("%s: no %s", mainUnit, stateKeyFlag)
	}
	for _, want := range []string{"ConditionPathExists=!" + string(key[1]) + "\n", "Before=" + mainUnit + "\n",
		binaryPath + " keygen - | systemd-creds encrypt --name=state-key -"} {
		if !bytes.Contains(keygen.data, []byte(want)) {
			t.Errorf("%s: lacks %q", keygenUnit, want)
		}
	}
}

// checkScripts wants the maintainer scripts of scripts/, parsed by sh -n,
// none of them starting the daemon.
func checkScripts(t *testing.T, p *pkg) {
	t.Helper()
	for _, name := range []string{"postinstall", "preremove", "postremove"} {
		src, err := os.ReadFile(filepath.Join(scriptsDir, name+".sh"))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := p.scripts[name]
		if !ok {
			t.Errorf("%s: missing", name)
			continue
		}
		if got != string(src) {
			t.Errorf("%s: got\n%s\nwant scripts/%s.sh", name, got, name)
		}
		mustParse(t, name, got)
		if startsDaemon.MatchString(got) {
			t.Errorf("%s: starts a unit; the daemon must wait for the operator's kubeconfig", name)
		}
	}
	if s, ok := p.scripts["preinstall"]; ok {
		t.Errorf("preinstall: got %q, want none", s)
	}
}

func mustParse(t *testing.T, name, script string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-n", f).CombinedOutput(); err != nil {
		t.Errorf("sh -n %s: %v\n%s", name, err, out)
	}
}

// checkBinary wants an executable for the host's architecture (make test
// packages amd64 on amd64) that names the version the package carries.
func checkBinary(t *testing.T, p *pkg) {
	t.Helper()
	e := p.entries[binaryPath]
	if e == nil || len(e.data) == 0 {
		t.Fatalf("%s: no content", binaryPath)
	}
	f, err := elf.NewFile(bytes.NewReader(e.data))
	if err != nil {
		t.Fatalf("%s: %v", binaryPath, err)
	}
	if want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]; f.Machine != want {
		t.Skipf("%s: built for %s, not this host's %s: not run", binaryPath, f.Machine, runtime.GOARCH)
	}
	bin := filepath.Join(t.TempDir(), "apiserver-lite")
	if err := os.WriteFile(bin, e.data, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", binaryPath, err, out)
	}
	if v := os.Getenv(versionEnv); v != "" && !strings.HasPrefix(string(out), "apiserver-lite "+v+" ") {
		t.Errorf("%s version: got %q, want it to name %s", binaryPath, out, v)
	}
}

// The post-install script enables the units on a first install, by dpkg's
// words and by rpm's, and on an upgrade enables nothing; it never starts
// the daemon. systemctl is a stub that records its arguments.
func TestPostInstallEnablesNeverStarts(t *testing.T) {
	enable := "enable apiserver-lite-keygen.service apiserver-lite.socket apiserver-lite.service apiserver-lite-credentials.path"
	tests := []struct {
		name string
		args []string
		want bool // enables the units
	}{
		{"dpkg first install", []string{"configure", ""}, true},
		{"rpm first install", []string{"1"}, true},
		{"dpkg upgrade", []string{"configure", "0.0.0~20260101-abcdef0"}, false},
		{"rpm upgrade", []string{"2"}, false},
		{"dpkg abort-upgrade", []string{"abort-upgrade", "0.1.0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := runWithStubSystemctl(t, filepath.Join(scriptsDir, "postinstall.sh"), tt.args...)
			if got := slices.Contains(calls, enable); got != tt.want {
				t.Errorf("got systemctl calls %q, want %q among them: %v", calls, enable, tt.want)
			}
			for _, c := range calls {
				if startsDaemon.MatchString("systemctl " + c) {
					t.Errorf("got systemctl %s, want nothing started", c)
				}
			}
		})
	}
}

// runWithStubSystemctl runs script with args and a systemctl on PATH that
// records each call, and returns the calls.
func runWithStubSystemctl(t *testing.T, script string, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	stub := "#!/bin/sh\necho \"$*\" >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(dir, "systemctl"), []byte(stub), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", script, args, err, out)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(raw)), "\n")
}

// Every maintainer script parses.
func TestMaintainerScriptsParse(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(scriptsDir, "*.sh"))
	if err != nil || len(scripts) != 3 {
		t.Fatalf("got %v (%v), want the three maintainer scripts", scripts, err)
	}
	for _, s := range scripts {
		raw, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		mustParse(t, filepath.Base(s), string(raw))
	}
}
