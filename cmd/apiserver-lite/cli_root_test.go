package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestHelpGolden(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, _, err := runCLI(t, args...)
		if err != nil {
			t.Fatalf("%v: got %v, want help and no error", args, err)
		}
		mustMatchGolden(t, "help.golden", out)
	}
}

// Every subcommand answers --help with its usage and no error.
func TestSubcommandHelp(t *testing.T) {
	for _, path := range []string{"status", "inspect", "snapshot", "snapshot save", "snapshot restore",
		"config", "config check", "kubeconfig", "version"} {
		t.Run(path, func(t *testing.T) {
			out, _, err := runCLI(t, append(strings.Fields(path), "--help")...)
			if err != nil || !strings.Contains(out, "Usage:\n  apiserver-lite "+path) {
				t.Errorf("got %v and\n%s\nwant the usage of apiserver-lite %s", err, out, path)
			}
		})
	}
}

// Arguments that name no subcommand are refused before the daemon starts:
// its data dir is never created.
func TestUnknownSubcommandGolden(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	var got strings.Builder
	for _, args := range [][]string{
		{"frobnicate", "--data-dir", data, "--node-name", "n1"},
		{"--data-dir", data, "--node-name", "n1", "frobnicate"},
		{"statu"},
		{"config"},
		{"config", "frob"},
		{"snapshot", "list"},
	} {
		out, _, err := runCLI(t, args...)
		if err == nil || out != "" {
			t.Fatalf("%v: got %v and output %q, want an error and no output", args, err, out)
		}
		got.WriteString("$ apiserver-lite " + strings.ReplaceAll(strings.Join(args, " "), data, "DATA") + "\n" + err.Error() + "\n\n")
	}
	mustMatchGolden(t, "unknown-subcommand.golden", got.String())
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("data dir: got %v, want it never created", err)
	}
}

// versionShape blanks what differs between builds in a version line.
var versionShape = regexp.MustCompile(`^apiserver-lite \S+ \(revision \S+, go\S+, \w+/\w+\)\n$`)

func TestVersionGolden(t *testing.T) {
	out, _, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !versionShape.MatchString(out) {
		t.Fatalf("version: got %q, want the shape %s", out, versionShape)
	}
	shape := regexp.MustCompile(`^apiserver-lite \S+ \(revision \S+, go\S+, \w+/\w+\)`).
		ReplaceAllString(out, "apiserver-lite VERSION (revision REVISION, GOVERSION, OS/ARCH)")
	mustMatchGolden(t, "version.golden", shape)
	if _, _, err := runCLI(t, "version", "extra"); err == nil {
		t.Error("version extra: got nil, want an error")
	}
}

func TestVersionLine(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126-abc+dirty"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	tests := []struct {
		name, version, revision string
		bi                      *debug.BuildInfo
		want                    string
	}{
		{"make build", "v1.2.3", "deadbeef-dirty", stamped, "apiserver-lite v1.2.3 (revision deadbeef-dirty,"},
		{"go stamped", "", "", stamped, "apiserver-lite v0.0.0-20261126-abc+dirty (revision abc123-dirty,"},
		{"clean tree", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			"apiserver-lite (devel) (revision abc123,"},
		{"nothing stamped", "", "", &debug.BuildInfo{}, "apiserver-lite (devel) (revision unknown,"},
		{"no build info", "", "", nil, "apiserver-lite (devel) (revision unknown,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, revision = tt.version, tt.revision
			t.Cleanup(func() { version, revision = "", "" })
			if got := versionLine(tt.bi); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want it to start with %q", got, tt.want)
			}
		})
	}
}

// make build stamps the checked-out revision, which the go command does not
// in a git worktree or with GOFLAGS=-buildvcs=false.
func TestMakeBuildStampsRevision(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	cmd := exec.Command("make", "-n", "build")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	if want := "-X main.revision=" + strings.TrimSpace(string(head)); !strings.Contains(string(out), want) {
		t.Errorf("make -n build: got %q, want it to contain %q", out, want)
	}
}

// A subcommand written as a command parses its own flags; its --help exits
// 0 and its errors are returned.
func TestAdaptCommand(t *testing.T) {
	legacy := func(_ context.Context, args []string, out io.Writer) error {
		fs := pflag.NewFlagSet("legacy", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		name := fs.String("name", "", "a name")
		if err := fs.Parse(args); err != nil {
			return err
		}
		_, err := fmt.Fprintln(out, "hello", *name)
		return err
	}
	tests := []struct {
		args    []string
		wantErr bool
		want    string
	}{
		{[]string{"legacy", "--name", "n1"}, false, "hello n1\n"},
		{[]string{"legacy", "--help"}, false, ""},
		{[]string{"legacy", "--bogus"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := &cobra.Command{Use: "apiserver-lite", SilenceErrors: true, SilenceUsage: true}
			root.AddCommand(adaptCommand("legacy", legacy))
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetArgs(tt.args)
			err := root.ExecuteContext(context.Background())
			if (err != nil) != tt.wantErr || out.String() != tt.want {
				t.Errorf("got %v and %q, want error %v and %q", err, out.String(), tt.wantErr, tt.want)
			}
		})
	}
}
