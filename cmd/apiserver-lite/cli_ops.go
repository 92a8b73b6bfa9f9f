package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
)

// outputFlag adds -o/--output (table or json) to fs.
func outputFlag(fs *pflag.FlagSet) *string {
	return fs.StringP("output", "o", "table", "output format: table or json")
}

// printDoc writes doc in format.
func printDoc(out io.Writer, doc operations.Status, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "table":
		return operations.RenderTable(out, doc)
	}
	return fmt.Errorf("output %q: want table or json", format)
}

func newStatusCommand() *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{Use: "status", Short: "Show the running daemon's resources, cloud link and freshness",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc, err := o.fetch(cmd.Context())
			if err != nil {
				return err
			}
			return printDoc(cmd.OutOrStdout(), doc, *o.format)
		}}
	fs := cmd.Flags()
	fs.StringVar(&o.kubeconfig, "kubeconfig", "",
		"kubeconfig for the daemon's authenticated door, as `apiserver-lite kubeconfig` writes it")
	fs.StringVar(&o.address, "address", defaultListenAddress, "the daemon's plain-HTTP door (insecure-listen-address), asked without --kubeconfig")
	fs.StringVar(&o.config, "config", "", "read the plain-HTTP door's address (insecure-listen-address) from this config file instead of --address")
	o.format = outputFlag(fs)
	cmd.MarkFlagsMutuallyExclusive("kubeconfig", "address")
	cmd.MarkFlagsMutuallyExclusive("kubeconfig", "config")
	return cmd
}

func newInspectCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{Use: "inspect", Short: "Show what a stopped daemon's data dir holds", Args: cobra.NoArgs}
	cmd.Flags().StringVar(&dir, "data-dir", defaultDataDir, "data directory of a stopped daemon")
	format := outputFlag(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		doc, err := operations.InspectDataDir(cmd.Context(), filepath.Join(dir, dbFile))
		if err != nil {
			return err
		}
		return printDoc(cmd.OutOrStdout(), doc, *format)
	}
	return cmd
}

func newConfigCommand() *cobra.Command {
	fs := newFlagSet()
	check := &cobra.Command{Use: "check --config FILE [flags]",
		Short: "Check a config file, with the flags and environment the daemon would see",
		Long: "Check a config file, with the flags and APISERVER_LITE_* environment the daemon would see:\n" +
			"every problem is reported and the exit status is non-zero; warnings do not fail the check.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return configCheck(fs, cmd.OutOrStdout(), cmd.ErrOrStderr())
		}}
	check.Flags().AddFlagSet(fs)
	return groupCommand("config", "Work with the daemon's configuration", check)
}

// configCheck validates the configuration fs describes, as the daemon
// would before it starts, and prints its warnings to errOut.
func configCheck(fs *pflag.FlagSet, out, errOut io.Writer) error {
	cfg, err := configFromFlags(fs)
	if err == nil && cfg.Config == "" {
		return errors.New("config check: --config is required")
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fmt.Errorf("config is invalid:\n%w", err)
	}
	for _, w := range cfg.warnings() {
		if _, err := fmt.Fprintln(errOut, "Warning:", w); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(out, "config %s: ok\n", cfg.Config)
	return err
}

// statusOptions are the flags of `apiserver-lite status`.
type statusOptions struct {
	kubeconfig, address, config string
	format                      *string
}

// fetch asks the daemon for its status: through the authenticated door
// with the kubeconfig, else through the plain-HTTP door.
func (o statusOptions) fetch(ctx context.Context) (operations.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, operations.StatusTimeout)
	defer cancel()
	if o.kubeconfig != "" {
		return operations.FetchStatus(ctx, o.kubeconfig, userAgent+"-status")
	}
	addr := o.address
	if o.config != "" {
		cfg, err := loadConfig([]string{"--config", o.config})
		if err != nil {
			return operations.Status{}, err
		}
		if cfg.InsecureListenAddress == "" {
			return operations.Status{}, fmt.Errorf("%s has no insecure-listen-address: pass --kubeconfig (apiserver-lite kubeconfig writes one)", o.config)
		}
		addr = cfg.InsecureListenAddress
	}
	return operations.FetchStatusPlain(ctx, addr)
}
