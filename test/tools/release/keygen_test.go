package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// credstore is where the key generator seals the state key.
const credstore = "/etc/credstore.encrypted"

// keygenScript is the shell script of the key generator's ExecStart, as
// systemd hands it to sh: continuation lines joined, $$ turned into $.
func keygenScript(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(unitsDir, keygenUnit))
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.ReplaceAll(string(raw), "\\\n", "")
	m := regexp.MustCompile(`(?m)^ExecStart=/bin/sh -ec '(.*)'$`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatalf("%s: no ExecStart=/bin/sh -ec '...'", keygenUnit)
	}
	return strings.ReplaceAll(m[1], "$$", "$")
}

// The key generator's script, with apiserver-lite and systemd-creds as
// stubs (sealing is a copy) and the credential store in a temporary
// directory: a 32-byte key ends up sealed under its name, and a key of any
// other size leaves nothing, so the next boot tries again.
func TestKeygenScript(t *testing.T) {
	tests := []struct {
		name    string
		keygen  string // the stub apiserver-lite's keygen output command
		wantKey bool
	}{
		{"a key", "head -c 32 /dev/zero", true},
		{"keygen failed", "exit 1", false},
		{"short key", "head -c 31 /dev/zero", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store := filepath.Join(dir, "credstore")
			bin := filepath.Join(dir, "bin")
			if err := os.Mkdir(bin, 0o700); err != nil {
				t.Fatal(err)
			}
			stub := func(name, body string) {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			stub("apiserver-lite", `[ "$1 $2" = "keygen -" ] || exit 2; `+tt.keygen)
			// encrypt --name=state-key - FILE; decrypt --name=state-key FILE -
			stub("systemd-creds", `case "$1" in encrypt) cat > "$4" ;; decrypt) cat "$3" ;; *) exit 2 ;; esac`)
			script := strings.ReplaceAll(keygenScript(t), credstore, store)
			script = strings.ReplaceAll(script, unitBinary, filepath.Join(bin, "apiserver-lite"))
			cmd := exec.Command("sh", "-ec", script)
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if (err == nil) != tt.wantKey {
				t.Fatalf("got %v, want success %v\n%s", err, tt.wantKey, out)
			}
			key, err := os.ReadFile(filepath.Join(store, "apiserver-lite.state-key"))
			switch {
			case tt.wantKey && len(key) != 32:
				t.Errorf("sealed key: got %d bytes (%v), want 32", len(key), err)
			case !tt.wantKey && err == nil:
				t.Errorf("sealed key: got one of %d bytes, want none after a failed run", len(key))
			}
			if _, err := os.Stat(filepath.Join(store, "apiserver-lite.state-key.new")); err == nil {
				t.Errorf("the temporary sealed key is left behind")
			}
			if st, err := os.Stat(store); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("credential store: got %v (%v), want a 0700 directory", st.Mode(), err)
			}
		})
	}
}
