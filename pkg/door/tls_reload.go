package door

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// tlsFileCheckInterval is how often, at most, the TLS door reads its
// certificate, key and client CA files again to see whether they changed:
// once a minute, as kube-apiserver's dynamic certificate controllers do. The
// check runs on a handshake, so an idle door reads nothing.
const tlsFileCheckInterval = time.Minute

// servingPaths are the files the TLS door's configuration comes from;
// clientCA is empty without --client-ca-file.
type servingPaths struct {
	cert, key, clientCA string
	// sealer opens a generated key sealed on disk; nil for a key file
	// given by the operator.
	sealer KeySealer
}

// servingContents are the PEM contents of servingPaths; clientCA is nil
// without a client CA file.
type servingContents struct {
	cert, key, clientCA []byte
}

func (c servingContents) equal(o servingContents) bool {
	return bytes.Equal(c.cert, o.cert) && bytes.Equal(c.key, o.key) && bytes.Equal(c.clientCA, o.clientCA)
}

// servingFiles serves the TLS door's configuration from its files and
// picks up a rotated certificate or client CA. New contents that do not
// load (a pair written halfway, a key that does not match, a CA file with
// no certificate) leave the last good configuration in place; a warning
// names the files once per such contents.
type servingFiles struct {
	paths servingPaths       // immutable
	clock clock.PassiveClock // immutable
	log   *slog.Logger       // immutable

	mu sync.Mutex
	// checked is when the files were last read. Guarded by mu.
	checked time.Time
	// seen is what the files held when last read, good or not. Guarded
	// by mu.
	seen servingContents
	// cfg is built from the last good contents. Guarded by mu.
	cfg *tls.Config
}

func newServingFiles(paths servingPaths, clk clock.PassiveClock, log *slog.Logger) *servingFiles {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &servingFiles{paths: paths, clock: clk, log: log}
}

// load reads the files for the first time; any fault is an error.
func (f *servingFiles) load() (*tls.Config, error) {
	c, err := f.read()
	if err != nil {
		return nil, err
	}
	cfg, err := servingConfig(c, f.paths.clientCA)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checked, f.seen, f.cfg = f.clock.Now(), c, cfg
	return cfg, nil
}

// configForClient is the door's tls.Config.GetConfigForClient: the
// configuration from the newest good contents, checked at most once per
// tlsFileCheckInterval.
func (f *servingFiles) configForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := f.clock.Now(); now.Sub(f.checked) >= tlsFileCheckInterval {
		f.checked = now
		f.refreshLocked()
	}
	return f.cfg, nil
}

// refreshLocked reads the files and, when they changed and load, makes
// them the configuration. mu must be held.
func (f *servingFiles) refreshLocked() {
	c, err := f.read()
	if err != nil {
		f.log.Warn("tls door: cannot read its certificate files, keeping the loaded ones", "err", err)
		return
	}
	if c.equal(f.seen) {
		return
	}
	f.seen = c
	cfg, err := servingConfig(c, f.paths.clientCA)
	if err != nil {
		f.log.Warn("tls door: changed certificate files do not load, keeping the loaded ones",
			"cert", f.paths.cert, "clientCA", f.paths.clientCA, "err", err)
		return
	}
	f.cfg = cfg
	f.log.Info("tls door: loaded changed certificate files", "cert", f.paths.cert, "clientCA", f.paths.clientCA)
}

// read returns the files' contents.
func (f *servingFiles) read() (servingContents, error) {
	var c servingContents
	var err error
	if c.cert, err = os.ReadFile(f.paths.cert); err != nil {
		return c, fmt.Errorf("read serving certificate: %w", err)
	}
	if c.key, err = os.ReadFile(f.paths.key); err != nil {
		return c, fmt.Errorf("read serving key: %w", err)
	}
	if c.key, err = openGeneratedKey(c.key, f.paths.sealer); err != nil {
		return c, err
	}
	if f.paths.clientCA != "" {
		if c.clientCA, err = os.ReadFile(f.paths.clientCA); err != nil {
			return c, fmt.Errorf("read client-ca-file: %w", err)
		}
	}
	return c, nil
}
