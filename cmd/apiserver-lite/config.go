package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/link"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/operations"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"k8s.io/apimachinery/pkg/api/resource"
)

// envPrefix prefixes every environment variable: --data-dir is
// APISERVER_LITE_DATA_DIR.
const envPrefix = "APISERVER_LITE"

// Defaults of the settings that have one.
const (
	defaultListenAddress = "127.0.0.1:10550"
	defaultDataDir       = "/var/lib/apiserver-lite"
	defaultKubeconfig    = "/etc/apiserver-lite/kubeconfig"
	defaultLogLevel      = "info"
	defaultLogFormat     = "text"
)

// config is the daemon's whole configuration. Keys in the config file are
// the flag names.
type config struct {
	Config         string           `mapstructure:"config"`
	Kubeconfig     string           `mapstructure:"kubeconfig"`
	DataDir        string           `mapstructure:"data-dir"`
	ListenAddress  string           `mapstructure:"listen-address"`
	NodeName       string           `mapstructure:"node-name"`
	WatchCacheSize int              `mapstructure:"watch-cache-size"`
	LogLevel       string           `mapstructure:"log-level"`
	SyncScope      string           `mapstructure:"sync-scope"`
	LogFormat      string           `mapstructure:"log-format"`
	MaxStaleness   time.Duration    `mapstructure:"max-staleness"`
	Resources      []resourceConfig `mapstructure:"resources"`

	// WatchProgressTimeout is how long the cloud's connections may be
	// silent before the link is probed, and how long the link may fail its
	// probes before every cloud watch is re-established.
	WatchProgressTimeout time.Duration `mapstructure:"watch-progress-timeout"`
	// MaxConcurrentRelists bounds the full cloud LISTs in flight.
	MaxConcurrentRelists int `mapstructure:"max-concurrent-relists"`
	// RelistSpread is the window over which watches resuming after the
	// cloud came back, and relists after a 410, are spread.
	RelistSpread time.Duration `mapstructure:"relist-spread"`
	// MemoryLimit is the Go soft memory limit as a Kubernetes quantity
	// (e.g. 900Mi); empty leaves the runtime's (GOMEMLIMIT) alone.
	MemoryLimit string `mapstructure:"memory-limit"`
	// GCPercent is the garbage collector's percent (as GOGC); 0 means
	// GOGC when set, else defaultGCPercent.
	GCPercent int `mapstructure:"gc-percent"`
	// EncryptionKeyFile holds the state key (32 raw bytes) that seals
	// Secrets and stored tokens; empty keeps tokens in memory only.
	EncryptionKeyFile string `mapstructure:"encryption-key-file"`

	doorsConfig      `mapstructure:",squash"`
	forPodsConfig    `mapstructure:",squash"`
	nsHoldingsConfig `mapstructure:",squash"`
	bootstrapConfig  `mapstructure:",squash"`
	poolConfig       `mapstructure:",squash"`
}

// resourceConfig is one entry of the resources list. Selectors may use
// ${NODE_NAME}.
type resourceConfig struct {
	Group         string `mapstructure:"group"`
	Version       string `mapstructure:"version"`
	Resource      string `mapstructure:"resource"`
	Namespace     string `mapstructure:"namespace"`
	LabelSelector string `mapstructure:"labelSelector"`
	FieldSelector string `mapstructure:"fieldSelector"`
}

// loadConfig parses args as the daemon's flags and loads the configuration
// they describe (see configFromFlags).
func loadConfig(args []string) (config, error) {
	fs := newFlagSet()
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	return configFromFlags(fs)
}

// configFromFlags applies, lowest precedence first: defaults, the config
// file, APISERVER_LITE_* environment variables, then the flags of fs (a
// newFlagSet, parsed) that were set.
func configFromFlags(fs *pflag.FlagSet) (config, error) {
	v := viper.New()
	if err := v.BindPFlags(fs); err != nil {
		return config{}, fmt.Errorf("bind flags: %w", err)
	}
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	v.SetDefault("resources", defaultResources())
	v.SetDefault("node-name", hostname()) // not the flag's default, so --help reads the same on every host
	if path := v.GetString("config"); path != "" {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return config{}, fmt.Errorf("read config %s: %w", path, err)
		}
	}
	var c config
	if err := v.UnmarshalExact(&c); err != nil {
		return config{}, fmt.Errorf("parse config: %w", err)
	}
	return c, c.validateValues()
}

func newFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("apiserver-lite", pflag.ContinueOnError)
	fs.String("config", "", "path to the YAML config file")
	fs.String("kubeconfig", defaultKubeconfig, "kubeconfig of the cloud kube-apiserver")
	fs.String("data-dir", defaultDataDir, "directory of the SQLite state (created with mode 0700)")
	fs.String("listen-address", defaultListenAddress,
		"address of the kubelet's door: HTTPS, authenticated by client certificate or token; empty turns it off")
	fs.String("node-name", "", "this node's name, substituted for ${NODE_NAME} in selectors (default: the host name, lowercased)")
	fs.Int("watch-cache-size", versioncache.DefaultCapacity, "events kept per resource for watches")
	fs.String("log-level", defaultLogLevel, "debug, info, warn or error")
	fs.Duration("watch-progress-timeout", link.DefaultWatchProgressTimeout,
		"how long the cloud connections may be silent before the link is probed, and the link may fail its probes before every cloud watch is re-established")
	fs.Int("max-concurrent-relists", link.DefaultMaxConcurrentRelists, "full cloud LISTs in flight at once")
	fs.Duration("relist-spread", link.DefaultRelistSpread,
		"window of the random delay before a cloud watch resumes after the link came back or relists after a 410; the cloud's Retry-After, when longer, widens it")
	fs.String("memory-limit", "", "Go soft memory limit, e.g. 900Mi; set it a little below the unit's MemoryMax=")
	fs.Int("gc-percent", 0, fmt.Sprintf("Go GC percent as GOGC (-1: off); 0: GOGC when set, else %d", defaultGCPercent))
	addDoorFlags(fs)
	addForPodsFlags(fs)
	addNSHoldingsFlags(fs)
	addBootstrapFlags(fs)
	addPoolFlags(fs)
	fs.String("encryption-key-file", "", "file of 32 random bytes (apiserver-lite keygen) that encrypts Secrets and stored tokens at rest; "+
		"keep it outside data-dir, e.g. a systemd LoadCredentialEncrypted= credential. Empty: tokens in memory only")
	fs.String("sync-scope", holding.ScopeAuto, "auto, node (what the Node authorizer lets this node read) or cluster (the resources list)")
	fs.String("log-format", defaultLogFormat, "text or json")
	fs.Duration("max-staleness", operations.DefaultMaxStaleness, "longest a resource may go without cloud news while the cloud is reachable before /readyz fails")
	return fs
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return strings.ToLower(h)
}

// memoryLimit is memory-limit in bytes, or 0 when unset.
func (c config) memoryLimit() (int64, error) {
	if c.MemoryLimit == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(c.MemoryLimit)
	if err != nil || q.Sign() <= 0 {
		return 0, fmt.Errorf("memory-limit must be a positive quantity such as 900Mi, got %q", c.MemoryLimit)
	}
	return q.Value(), nil
}
