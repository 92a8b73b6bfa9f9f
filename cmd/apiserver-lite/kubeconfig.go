package main

import (
	"github.com/spf13/cobra"

	"github.com/apiserver-lite/apiserver-lite/pkg/kubeconfig"
)

const kubeconfigLong = `Write a kubeconfig for the daemon's local door (listen-address) that
authenticates with the kubelet's client certificate, so that
'kubectl --kubeconfig FILE' on the node sees what the kubelet sees.

The certificate and key are taken from the current user of the kubelet's
kubeconfig: paths (made absolute, so a rotated certificate is followed) or
embedded data. The server's CA is the daemon's generated one,
<data-dir>/tls/ca.crt, or --certificate-authority when tls-cert-file is set.
The listen-address and data-dir are read as the daemon reads them (--config,
APISERVER_LITE_* environment, defaults). The kubelet's key is readable by root
only, so this is meant to run as root; the file is written with mode 0600.`

// kubeconfigOptions are the flags of `apiserver-lite kubeconfig`.
type kubeconfigOptions struct {
	kubelet, config, ca, output string
}

func newKubeconfigCommand() *cobra.Command {
	var o kubeconfigOptions
	cmd := &cobra.Command{Use: "kubeconfig [--output FILE]",
		Short: "Write a kubeconfig for the local door from the kubelet's credentials (root only)",
		Long:  kubeconfigLong, Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := o.build()
			if err != nil {
				return err
			}
			if o.output == "" || o.output == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			return kubeconfig.WritePrivateFile(o.output, data)
		}}
	fs := cmd.Flags()
	fs.StringVar(&o.kubelet, "kubelet-kubeconfig", kubeconfig.DefaultKubeletKubeconfig, "the kubelet's kubeconfig, whose client certificate the written kubeconfig uses")
	fs.StringVar(&o.config, "config", "", "the daemon's config file, for its listen-address and data-dir")
	fs.StringVar(&o.ca, "certificate-authority", "", "CA of the daemon's serving certificate; default: the generated <data-dir>/tls/ca.crt")
	fs.StringVar(&o.output, "output", "", "write to this file (mode 0600) instead of standard output")
	return cmd
}

// build reads the daemon's settings as the daemon does and returns the
// kubeconfig's contents.
func (o kubeconfigOptions) build() ([]byte, error) {
	var args []string
	if o.config != "" {
		args = []string{"--config", o.config}
	}
	cfg, err := loadConfig(args)
	if err != nil {
		return nil, err
	}
	return kubeconfig.Build(kubeconfig.Options{KubeletKubeconfig: o.kubelet, CA: o.ca,
		ListenAddress: cfg.ListenAddress, DataDir: cfg.DataDir, TLSCertFile: cfg.TLSCertFile})
}
