package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/pflag"
)

// command is an operator subcommand: apiserver-lite <name> [args].
type command func(ctx context.Context, args []string, out io.Writer) error

// commands are the operator subcommands; any other first argument runs the
// daemon.
func commands() map[string]command {
	return map[string]command{
		"status":   cmdStatus,
		"inspect":  cmdInspect,
		"version":  cmdVersion,
		"config":   cmdConfig,
		"snapshot": cmdSnapshot,
		"keygen":   cmdKeygen,
		"rekey":    cmdRekey,
	}
}

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version and VCS revision are shown.
var version = ""

// statusTimeout bounds `status`'s request to the daemon.
const statusTimeout = 10 * time.Second

func cmdVersion(_ context.Context, args []string, out io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("version takes no arguments")
	}
	v, rev := version, "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	_, err := fmt.Fprintf(out, "apiserver-lite %s (revision %s, %s, %s/%s)\n", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

// outputFlag adds -o/--output (table or json) to fs.
func outputFlag(fs *pflag.FlagSet) *string {
	return fs.StringP("output", "o", "table", "output format: table or json")
}

// printDoc writes doc in format.
func printDoc(out io.Writer, doc statusDoc, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "table":
		return renderTable(out, doc)
	}
	return fmt.Errorf("output %q: want table or json", format)
}

func cmdStatus(ctx context.Context, args []string, out io.Writer) error {
	fs := pflag.NewFlagSet("status", pflag.ContinueOnError)
	addr := fs.String("address", defaultListenAddress, "the daemon's loopback listen-address")
	cfgFile := fs.String("config", "", "read the listen-address from this config file instead")
	format := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cfgFile != "" {
		cfg, err := loadConfig([]string{"--config", *cfgFile})
		if err != nil {
			return err
		}
		*addr = cfg.ListenAddress
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+*addr+pathStatus, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return fmt.Errorf("ask the daemon at %s: %w", *addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("ask the daemon at %s: status %d", *addr, resp.StatusCode)
	}
	var doc statusDoc
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxStatusBytes)).Decode(&doc); err != nil {
		return fmt.Errorf("decode status: %w", err)
	}
	return printDoc(out, doc, *format)
}

// maxStatusBytes bounds the status document read from the daemon.
const maxStatusBytes = 4 << 20

func cmdInspect(ctx context.Context, args []string, out io.Writer) error {
	fs := pflag.NewFlagSet("inspect", pflag.ContinueOnError)
	dir := fs.String("data-dir", defaultDataDir, "data directory of a stopped daemon")
	format := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	doc, err := inspectDataDir(ctx, filepath.Join(*dir, dbFile))
	if err != nil {
		return err
	}
	return printDoc(out, doc, *format)
}

func cmdConfig(_ context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		return fmt.Errorf("usage: apiserver-lite config check --config FILE [flags]")
	}
	cfg, err := loadConfig(args[1:])
	if err == nil && cfg.Config == "" {
		return errors.New("config check: --config is required")
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return fmt.Errorf("config is invalid:\n%w", err)
	}
	_, err = fmt.Fprintf(out, "config %s: ok\n", cfg.Config)
	return err
}
