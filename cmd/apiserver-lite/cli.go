package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// run executes the command line args: the subcommand they name, or the
// daemon when they name none.
func run(ctx context.Context, args []string) error {
	root := newRootCommand()
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// rootLong is the description `apiserver-lite --help` starts with.
const rootLong = `apiserver-lite serves the kubelet and other local clients of an edge node
from a local copy of what the node may read in the cloud's kube-apiserver,
and keeps serving it while the cloud is unreachable.

Without a subcommand it runs the daemon with the flags below. Settings come,
lowest precedence first, from the defaults, the --config file, APISERVER_LITE_*
environment variables (--data-dir is APISERVER_LITE_DATA_DIR), then flags.`

// newRootCommand is the apiserver-lite command: the daemon, and the
// operator subcommands under it.
func newRootCommand() *cobra.Command {
	fs := newFlagSet()
	root := &cobra.Command{
		Use:   "apiserver-lite [flags]",
		Short: "Edge-node Kubernetes API cache",
		Long:  rootLong,
		Args:  noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := configFromFlags(fs)
			if err != nil {
				return err
			}
			return runDaemon(cmd.Context(), cfg)
		},
		// main prints the error once; a mistyped flag does not bury it
		// under the daemon's long usage.
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.Flags().AddFlagSet(fs)
	root.AddCommand(newStatusCommand(), newInspectCommand(), newSnapshotCommand(), newConfigCommand(),
		newKubeconfigCommand(), newVersionCommand())
	for name, c := range commands() {
		root.AddCommand(adaptCommand(name, c))
	}
	return root
}

// noSubcommand refuses arguments that name no subcommand, so a mistyped
// subcommand never starts the daemon.
func noSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return fmt.Errorf("%s\nRun '%s --help' for usage", msg, cmd.CommandPath())
}

// groupCommand is a command whose only use is its subcommands.
func groupCommand(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: noSubcommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var names []string
			for _, s := range cmd.Commands() {
				names = append(names, s.Name())
			}
			slices.Sort(names)
			return fmt.Errorf("%s needs a subcommand: %s\nRun '%s --help' for usage",
				cmd.Name(), strings.Join(names, ", "), cmd.CommandPath())
		}}
	cmd.AddCommand(subs...)
	return cmd
}

// command is a subcommand that parses its own arguments with a
// pflag.FlagSet of ContinueOnError: apiserver-lite <name> [args].
type command func(ctx context.Context, args []string, out io.Writer) error

// commands are the subcommands written as a command; newRootCommand adds
// each under its name.
// commandShorts are the one-line descriptions --help lists for commands.
var commandShorts = map[string]string{
	"keygen": "Write a new state key (32 random bytes) for --encryption-key-file",
	"rekey":  "Re-encrypt a stopped daemon's state with a new key",
}

func commands() map[string]command {
	return map[string]command{
		"keygen": cmdKeygen,
		"rekey":  cmdRekey,
	}
}

// adaptCommand makes c a subcommand; its own flag set answers -h and
// --help, which then exit 0.
func adaptCommand(name string, c command) *cobra.Command {
	short, ok := commandShorts[name]
	if !ok {
		short = "see " + name + " --help"
	}
	return &cobra.Command{Use: name + " [args]", Short: short, DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := c(cmd.Context(), args, cmd.OutOrStdout())
			if errors.Is(err, pflag.ErrHelp) {
				return nil
			}
			return err
		}}
}

// version and revision are set at build time, as make build does, with
// -ldflags "-X main.version=v1.2.3 -X main.revision=<commit>[-dirty]";
// otherwise the module version and the VCS revision the go command
// stamped are shown. make stamps the revision itself, since the go command
// stamps none in a git worktree or with GOFLAGS=-buildvcs=false.
var version, revision = "", ""

func newVersionCommand() *cobra.Command {
	return &cobra.Command{Use: "version", Short: "Print the version and the VCS revision it was built from",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine(bi))
			return err
		}}
}

// versionLine reports the version (main.version, else the module's), the
// VCS revision with "-dirty" when built from a modified tree, and the Go
// version and platform.
func versionLine(bi *debug.BuildInfo) string {
	v, rev := version, revision
	if bi != nil && v == "" {
		v = bi.Main.Version
	}
	if bi != nil && rev == "" {
		rev = stampedRevision(bi)
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" {
		rev = "unknown"
	}
	return fmt.Sprintf("apiserver-lite %s (revision %s, %s, %s/%s)", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// stampedRevision is the VCS revision the go command stamped into bi, with
// "-dirty" when the tree was modified; empty when none was stamped.
func stampedRevision(bi *debug.BuildInfo) string {
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" && dirty {
		rev += "-dirty"
	}
	return rev
}
