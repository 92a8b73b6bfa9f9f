package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
)

// logFormats are the accepted log-format values.
var logFormats = []string{"text", "json"}

// scopeValues are the accepted sync-scope values.
var scopeValues = []string{holding.ScopeAuto, holding.ScopeNode, holding.ScopeCluster}

// Validate checks every value and that the files the config names exist:
// what `apiserver-lite config check` reports, and what the daemon checks
// before it starts. Each problem is one error of the joined result.
func (c config) Validate() error {
	return errors.Join(c.validateValues(), c.validateFiles())
}

// validateValues checks the values alone, touching no file: the core
// settings, then each group's own checks.
func (c config) validateValues() error {
	errs := c.validateCore()
	for _, err := range []error{c.validateSync(), c.doorsConfig.validate(c.ListenAddress), c.forPodsConfig.validate(),
		c.nsHoldingsConfig.validate(), c.validateBootstrap(), c.poolConfig.validate()} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// validateCore checks the node, the store, the resources, the doors'
// address and the logging and memory settings.
func (c config) validateCore() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.NodeName == "" {
		add("node-name is required")
	}
	if c.DataDir == "" {
		add("data-dir is required")
	} else if !filepath.IsAbs(c.DataDir) {
		add("data-dir must be an absolute path, got %q", c.DataDir)
	}
	if c.WatchCacheSize <= 0 {
		add("watch-cache-size must be positive, got %d", c.WatchCacheSize)
	}
	if len(c.Resources) == 0 {
		add("resources must not be empty")
	} else if _, err := syncResources(c); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := net.SplitHostPort(c.ListenAddress); c.ListenAddress != "" && err != nil { // "" turns the door off
		add("listen-address %q: want host:port", c.ListenAddress)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		add("log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	if !slices.Contains(logFormats, c.LogFormat) {
		add("log-format %q: want text or json", c.LogFormat)
	}
	if _, err := c.memoryLimit(); err != nil {
		errs = append(errs, err)
	}
	if err := c.validateGCPercent(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// validateSync checks the sync loop's settings.
func (c config) validateSync() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.MaxStaleness <= 0 {
		add("max-staleness must be a positive duration, got %s", c.MaxStaleness)
	}
	if c.WatchProgressTimeout <= 0 {
		add("watch-progress-timeout must be positive, got %s", c.WatchProgressTimeout)
	}
	if c.MaxConcurrentRelists <= 0 {
		add("max-concurrent-relists must be positive, got %d", c.MaxConcurrentRelists)
	}
	if c.RelistSpread <= 0 {
		add("relist-spread must be a positive duration, got %s", c.RelistSpread)
	}
	if !slices.Contains(scopeValues, c.SyncScope) {
		add("sync-scope %q: want auto, node or cluster", c.SyncScope)
	}
	return errors.Join(errs...)
}

// validateFiles checks that the kubeconfig is a readable file and that
// data-dir, if it exists, is a directory.
func (c config) validateFiles() error {
	var errs []error
	if c.Kubeconfig != "" {
		if fi, err := os.Stat(c.Kubeconfig); err != nil {
			errs = append(errs, fmt.Errorf("kubeconfig: %w", err))
		} else if !fi.Mode().IsRegular() {
			errs = append(errs, fmt.Errorf("kubeconfig %s: not a regular file", c.Kubeconfig))
		}
	}
	if c.DataDir != "" {
		if fi, err := os.Stat(c.DataDir); err == nil && !fi.IsDir() {
			errs = append(errs, fmt.Errorf("data-dir %s: not a directory", c.DataDir))
		}
	}
	return errors.Join(errs...)
}

// warnings are settings that work but weaken the daemon's security: what
// `config check` prints and the daemon logs at startup.
func (c config) warnings() []string {
	var out []string
	if w := c.sharedDoorAddress(); w != "" {
		out = append(out, w)
	}
	if c.Kubeconfig == "" {
		return out
	}
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return out
	}
	if rc.Insecure {
		out = append(out, fmt.Sprintf("kubeconfig %s sets insecure-skip-tls-verify: the cloud's serving certificate "+
			"is not verified, so anyone on the path to the cloud can pose as it; set certificate-authority instead", c.Kubeconfig))
	}
	tlsDoors := c.ListenAddress != "" || c.SecureListenAddress != ""
	if tlsDoors && c.ClientCAFile == "" && (rc.CAFile != "" || len(rc.CAData) > 0) {
		out = append(out, fmt.Sprintf("client-ca-file is unset: the TLS doors accept client certificates signed by "+
			"kubeconfig %s's CA, which verifies the cloud's serving certificate; where that CA is not the cluster's "+
			"client CA (many non-kubeadm clusters), set client-ca-file to kube-apiserver's --client-ca-file", c.Kubeconfig))
	}
	return out
}
