package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/door"
	"github.com/spf13/pflag"
)

// doorsConfig are the settings of the local API's two doors. Keys in the
// config file are the flag names; the TLS door's are kube-apiserver's.
type doorsConfig struct {
	// InsecureListenAddress is the plain-HTTP door's address, where every
	// caller acts as this node; empty (the default) turns it off.
	InsecureListenAddress string `mapstructure:"insecure-listen-address"`
	// InsecureAllowRemote lets insecure-listen-address be a non-loopback
	// address.
	InsecureAllowRemote bool `mapstructure:"insecure-allow-remote"`
	// SecureListenAddress is the TLS door's address; empty turns it off.
	SecureListenAddress string `mapstructure:"secure-listen-address"`
	TLSCertFile         string `mapstructure:"tls-cert-file"`
	TLSPrivateKeyFile   string `mapstructure:"tls-private-key-file"`
	// ClientCAFile is the CA of the client certificates both TLS doors
	// accept; empty means the cloud kubeconfig's CA.
	ClientCAFile string `mapstructure:"client-ca-file"`
	// OfflineAuthzGrace is how long stored authorization decisions stand
	// in for the cloud's while it cannot be asked.
	OfflineAuthzGrace time.Duration `mapstructure:"offline-authz-grace"`
	// MaxConnections, MaxRequestsInflight and MaxWatchesPerClient cap
	// each door; beyond them a client gets 429 with Retry-After.
	MaxConnections      int `mapstructure:"max-connections"`
	MaxRequestsInflight int `mapstructure:"max-requests-inflight"`
	MaxWatchesPerClient int `mapstructure:"max-watches-per-client"`
	// VerifyServiceAccountTokens verifies the node's own pods' service-
	// account tokens on the node instead of by TokenReview.
	VerifyServiceAccountTokens bool `mapstructure:"verify-service-account-tokens"`
	// ServiceAccountIssuer is the cloud's --service-account-issuer; empty
	// reads it from the cloud's discovery document.
	ServiceAccountIssuer string `mapstructure:"service-account-issuer"`
	// APIAudiences are the cloud's --api-audiences; empty learns them from
	// TokenReviews.
	APIAudiences []string `mapstructure:"api-audiences"`
	// MaxConnectionsPerSource caps one remote address's connections per
	// door; beyond it only the node's certificate is served.
	MaxConnectionsPerSource int `mapstructure:"max-connections-per-source"`
	// ClusterScopeNodeWrites is who the node's writes are forwarded as in
	// cluster scope: "node" (the daemon impersonating the node) or
	// "daemon" (the daemon's own identity).
	ClusterScopeNodeWrites string `mapstructure:"cluster-scope-node-writes"`
}

// The cluster-scope-node-writes values.
const (
	nodeWritesAsNode   = "node"
	nodeWritesAsDaemon = "daemon"
)

func addDoorFlags(fs *pflag.FlagSet) {
	fs.String("insecure-listen-address", "",
		"address of a plain-HTTP door where every caller acts as this node, for tests and debugging; empty (default) turns it off")
	fs.Bool("insecure-allow-remote", false,
		"allow a non-loopback insecure-listen-address; anyone who reaches it acts with this node's identity")
	fs.String("secure-listen-address", "",
		"address of a second authenticated door for pods and other tenants, e.g. 169.254.20.10:10551; empty turns it off")
	fs.String("tls-cert-file", "", "serving certificate of the TLS doors; empty generates one in the data dir")
	fs.String("tls-private-key-file", "", "key of tls-cert-file")
	fs.String("client-ca-file", "",
		"CA bundle whose client certificates the TLS doors accept (CN is the user, O the groups); empty: the cloud kubeconfig's CA")
	fs.Duration("offline-authz-grace", door.DefaultOfflineAuthzGrace,
		"how long a stored authorization decision is reused while the cloud cannot be asked")
	fs.Int("max-connections", door.DefaultMaxConnections,
		"open connections per door; a quarter of them (at most 64) is reserved for handshakes presenting this node's client certificate")
	fs.Int("max-connections-per-source", door.DefaultMaxConnectionsPerSource,
		"open connections per remote address (loopback included) and door; beyond it only this node's client certificate is served")
	fs.String("cluster-scope-node-writes", nodeWritesAsNode,
		"in cluster scope, forward the node's writes as the node (node: impersonating system:node:<name>, so NodeRestriction "+
			"applies; needs RBAC impersonate, see configs/sync-scopes.md) or with the daemon's own identity (daemon)")
	fs.Int("max-requests-inflight", door.DefaultMaxRequestsInflight,
		"short (not long-running) requests being served per door; a quarter is reserved for this node's identity, any other gets a fair share of the rest")
	fs.Int("max-watches-per-client", door.DefaultMaxWatchesPerClient,
		"open long-running requests (watch, log, exec, attach, portforward, proxy) per client identity and door")
	fs.Bool("verify-service-account-tokens", true,
		"verify the service-account tokens of this node's pods on the node, against the cloud's published signing keys, "+
			"instead of asking the cloud for a TokenReview")
	fs.String("service-account-issuer", "",
		"the cloud's service-account issuer (kube-apiserver's first --service-account-issuer); empty reads it from the cloud's "+
			"/.well-known/openid-configuration")
	fs.StringSlice("api-audiences", nil,
		"the cloud's --api-audiences; empty learns them from the audiences of the cloud's TokenReview answers")
}

func (c doorsConfig) validate(listenAddress string) error {
	var errs []error
	if err := door.CheckListenAddress(c.InsecureListenAddress, c.InsecureAllowRemote); err != nil {
		errs = append(errs, err)
	}
	if listenAddress == "" && c.SecureListenAddress == "" && c.InsecureListenAddress == "" {
		errs = append(errs, errors.New("listen-address, secure-listen-address and insecure-listen-address are all empty: no door is open"))
	}
	if (c.TLSCertFile == "") != (c.TLSPrivateKeyFile == "") {
		errs = append(errs, errors.New("tls-cert-file and tls-private-key-file must be set together"))
	}
	if c.ClusterScopeNodeWrites != nodeWritesAsNode && c.ClusterScopeNodeWrites != nodeWritesAsDaemon {
		errs = append(errs, fmt.Errorf("cluster-scope-node-writes %q: want node or daemon", c.ClusterScopeNodeWrites))
	}
	if c.OfflineAuthzGrace < 0 {
		errs = append(errs, fmt.Errorf("offline-authz-grace must not be negative, got %s", c.OfflineAuthzGrace))
	}
	for name, v := range map[string]int{"max-connections": c.MaxConnections,
		"max-requests-inflight": c.MaxRequestsInflight, "max-watches-per-client": c.MaxWatchesPerClient,
		"max-connections-per-source": c.MaxConnectionsPerSource} {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, v))
		}
	}
	return errors.Join(errs...)
}

func (c doorsConfig) limits() door.Limits {
	return door.Limits{MaxConnections: c.MaxConnections, MaxRequestsInflight: c.MaxRequestsInflight,
		MaxWatchesPerClient: c.MaxWatchesPerClient, MaxConnectionsPerSource: c.MaxConnectionsPerSource}
}
