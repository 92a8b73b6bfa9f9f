package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apiserver-lite/apiserver-lite/pkg/atrest"
	"github.com/apiserver-lite/apiserver-lite/pkg/seal"
	"github.com/spf13/pflag"
)

// keyCredential is the name of the state key's systemd credential: the
// unit's LoadCredentialEncrypted= and systemd-creds encrypt --name= agree
// on it.
const keyCredential = "state-key"

// keyCredstorePath is where the unit loads the sealed state key from.
const keyCredstorePath = "/etc/credstore.encrypted/apiserver-lite." + keyCredential

// keygenUsage documents both ways to make the key.
const keygenUsage = `usage: apiserver-lite keygen FILE [--data-dir D]
       apiserver-lite keygen - | systemd-creds encrypt --name=` + keyCredential + ` - ` + keyCredstorePath

// cmdKeygen writes a new state key: to FILE (mode 0600, never inside the
// data dir, never over an existing file), or with "-" as raw bytes to
// standard output for systemd-creds to seal, so it never rests in the
// clear.
func cmdKeygen(_ context.Context, args []string, out io.Writer) error {
	fs := pflag.NewFlagSet("keygen", pflag.ContinueOnError)
	dir := fs.String("data-dir", defaultDataDir, "data directory of the daemon; the key is refused inside it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New(keygenUsage)
	}
	key, err := seal.Generate()
	if err != nil {
		return err
	}
	file := fs.Arg(0)
	if file == "-" {
		if isTerminal(out) {
			return errors.New("keygen -: standard output is a terminal; pipe it to systemd-creds encrypt")
		}
		_, err := out.Write(key)
		return err
	}
	if err := atrest.KeyOutsideDataDir(file, *dir); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if err := seal.WriteKeyFile(file, key); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	_, err = fmt.Fprintf(out, `wrote a new state key to %s (mode 0600); pass it as --encryption-key-file.
Under systemd, seal it to this host's TPM2 (or host key) for the unit's LoadCredentialEncrypted= instead:
  systemd-creds encrypt --name=%s %s %s && shred -u %s
`, file, keyCredential, file, keyCredstorePath, file)
	return err
}

// isTerminal reports whether w is a character device such as a terminal,
// where raw key bytes would be shown and kept in its scrollback.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
