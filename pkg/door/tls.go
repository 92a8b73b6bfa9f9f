package door

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"
)

const (
	// servingDir holds the generated serving certificate inside the data
	// dir.
	servingDir = "tls"
	// servingCertFile holds the generated certificate followed by its CA;
	// servingKeyFile its key; servingCAFile the CA alone, for clients.
	servingCertFile = "apiserver-lite.crt"
	servingKeyFile  = "apiserver-lite.key"
	servingCAFile   = "ca.crt"
	// renewBefore regenerates a generated certificate this close to its
	// expiry (a year after generation).
	renewBefore = 30 * 24 * time.Hour
	// privateFileMode keeps key material to the daemon.
	privateFileMode = 0o600
	// publicFileMode lets every local client read the certificates, which
	// are public, so none has to skip verification; publicDirMode lets them
	// reach the CA in a directory that holds only certificates and 0600
	// keys.
	publicFileMode = 0o644
	publicDirMode  = 0o755
)

// TLSOptions are the TLS door's kube-apiserver-named flags.
type TLSOptions struct {
	CertFile, KeyFile, ClientCAFile string
	// DataDir receives a generated certificate when CertFile is empty.
	DataDir string
	// Host is the name, IPs and DNS names of a generated certificate.
	Host string
	IPs  []net.IP
	DNS  []string
	// Clock times the checks for changed files; nil means the real clock.
	Clock clock.PassiveClock
	// Logger is told of changed files that cannot be used; nil discards.
	Logger *slog.Logger
	// KeySealer, when set, keeps a generated key sealed on disk.
	KeySealer KeySealer
}

// ServerTLS returns the TLS door's configuration and, when it generated
// the serving certificate, the path of the CA that signs it. As
// kube-apiserver's dynamic certificates do, the serving pair and the client
// CA are read again from their files when they change (see tls_reload.go).
func ServerTLS(o TLSOptions, now time.Time) (*tls.Config, string, error) {
	certFile, keyFile, caPath := o.CertFile, o.KeyFile, ""
	if certFile == "" && keyFile == "" {
		var err error
		if certFile, keyFile, caPath, err = generatedServing(o, now); err != nil {
			return nil, "", err
		}
	} else if certFile == "" || keyFile == "" {
		return nil, "", errors.New("tls-cert-file and tls-private-key-file must be set together")
	}
	paths := servingPaths{cert: certFile, key: keyFile, clientCA: o.ClientCAFile}
	if caPath != "" {
		paths.sealer = o.KeySealer
	}
	files := newServingFiles(paths, o.Clock, o.Logger)
	cfg, err := files.load()
	if err != nil {
		return nil, "", err
	}
	out := cfg.Clone()
	out.GetConfigForClient = files.configForClient
	return out, caPath, nil
}

// servingConfig builds the door's configuration from the PEM contents of
// its files; caPEM is nil without a client CA file.
func servingConfig(c servingContents, caFile string) (*tls.Config, error) {
	pair, err := tls.X509KeyPair(c.cert, c.key)
	if err != nil {
		return nil, fmt.Errorf("load serving certificate: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair},
		NextProtos: []string{"h2", "http/1.1"}}
	if c.clientCA != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c.clientCA) {
			return nil, fmt.Errorf("client-ca-file %s holds no PEM certificate", caFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// generatedServing returns a self-signed serving certificate kept in the
// data dir, generating it when absent or about to expire.
func generatedServing(o TLSOptions, now time.Time) (certFile, keyFile, caFile string, err error) {
	dir := filepath.Join(o.DataDir, servingDir)
	certFile, keyFile, caFile = filepath.Join(dir, servingCertFile), filepath.Join(dir, servingKeyFile), filepath.Join(dir, servingCAFile)
	if fresh(certFile, keyFile, now, o.KeySealer) && covers(certFile, o) {
		return certFile, keyFile, caFile, publish(dir, certFile, caFile)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(o.Host, o.IPs, o.DNS)
	if err != nil {
		return "", "", "", fmt.Errorf("generate serving certificate: %w", err)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil || len(certs) < 2 {
		return "", "", "", fmt.Errorf("generated serving certificate: %w", errors.Join(err, errors.New("no CA")))
	}
	caPEM, err := certutil.EncodeCertificates(certs[len(certs)-1])
	if err != nil {
		return "", "", "", err
	}
	if err := os.MkdirAll(dir, publicDirMode); err != nil {
		return "", "", "", fmt.Errorf("create %s: %w", dir, err)
	}
	if err := writeGeneratedKey(keyFile, keyPEM, o.KeySealer); err != nil {
		return "", "", "", err
	}
	for path, data := range map[string][]byte{certFile: certPEM, caFile: caPEM} {
		if err := writeFile(path, data, publicFileMode); err != nil {
			return "", "", "", err
		}
	}
	return certFile, keyFile, caFile, publish(dir, certFile, caFile)
}

// publish makes the generated certificates and their directory readable by
// every local client, also where an older version left them 0600 and 0700.
// A missing CA file is left for the next generation.
func publish(dir, certFile, caFile string) error {
	for path, mode := range map[string]os.FileMode{dir: publicDirMode, certFile: publicFileMode, caFile: publicFileMode} {
		if err := os.Chmod(path, mode); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("chmod %s: %w", path, err)
		}
	}
	return nil
}

// fresh is true when a usable generated pair exists and is not about to
// expire.
func fresh(certFile, keyFile string, now time.Time, s KeySealer) bool {
	pair, err := loadGeneratedPair(certFile, keyFile, s)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	return err == nil && now.Add(renewBefore).Before(leaf.NotAfter)
}

// covers is true when the generated certificate names every address and
// DNS name o asks for, so a door added at a new address regenerates it.
func covers(certFile string, o TLSOptions) bool {
	certs, err := certutil.CertsFromFile(certFile)
	if err != nil || len(certs) == 0 {
		return false
	}
	for _, ip := range o.IPs {
		if certs[0].VerifyHostname(ip.String()) != nil {
			return false
		}
	}
	for _, name := range append([]string{o.Host}, o.DNS...) {
		if name != "" && certs[0].VerifyHostname(name) != nil {
			return false
		}
	}
	return true
}

// writeFile writes data to path with mode (whatever the umask) through a
// rename, so a crash leaves either the old or the new file.
// writePrivate writes data to path with mode 0600 through a rename.
func writePrivate(path string, data []byte) error { return writeFile(path, data, privateFileMode) }

func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // a crash's leftover would keep its mode
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}
