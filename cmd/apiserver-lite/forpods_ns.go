package main

import (
	"github.com/apiserver-lite/apiserver-lite/pkg/holding"
	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/spf13/pflag"
)

// nsHoldingsConfig are the caps on what is held for pods. Keys in the
// config file are the flag names.
type nsHoldingsConfig struct {
	// PodIdentityNamespaceMaxObjects bounds the objects held in one
	// namespace for its pods; 0 holds nothing in namespaces.
	PodIdentityNamespaceMaxObjects int `mapstructure:"pod-identity-namespace-max-objects"`
	// PodIdentityNamespaceMaxBytes bounds their bytes, a quantity.
	PodIdentityNamespaceMaxBytes string `mapstructure:"pod-identity-namespace-max-bytes"`
	// PodIdentityMaxBytes bounds the bytes of every holding for pods.
	PodIdentityMaxBytes string `mapstructure:"pod-identity-max-bytes"`
}

func addNSHoldingsFlags(fs *pflag.FlagSet) {
	fs.Int("pod-identity-namespace-max-objects", holding.DefaultNamespaceMaxObjects,
		"objects held at once in one namespace for that namespace's pods (an operator's configmaps and custom resources); "+
			"a holding that would cross it is not held and its reads stay the cloud's; 0 holds nothing in namespaces")
	fs.String("pod-identity-namespace-max-bytes", holding.DefaultNamespaceMaxBytes,
		"JSON bytes held at once in one namespace for that namespace's pods, a quantity such as 64Mi")
	fs.String("pod-identity-max-bytes", holding.DefaultMaxBytes,
		"JSON bytes held at once for pods on their own identities, cluster-wide and namespaced holdings together, a quantity such as 256Mi")
}

// caps returns the configured caps, without ClusterBytes.
func (c nsHoldingsConfig) caps() (forpods.Caps, error) {
	return forpods.ParseCaps(c.PodIdentityNamespaceMaxObjects, c.PodIdentityNamespaceMaxBytes, c.PodIdentityMaxBytes)
}

func (c nsHoldingsConfig) validate() error {
	_, err := c.caps()
	return err
}
