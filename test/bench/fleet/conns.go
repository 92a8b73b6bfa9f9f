//go:build e2e

package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/apiserver-lite/apiserver-lite/test/bench"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/test/e2e/framework"
)

// tcpEstablished is the state column of /proc/net/tcp for an established
// connection.
const tcpEstablished = "01"

// baseline is what the cloud carries without the side being measured.
type baseline struct {
	watches int // open watches (apiserver_longrunning_requests)
	conns   int // established connections to kube-apiserver's port
}

// readBaseline reads the cloud's open watches and connections.
func readBaseline(ctx context.Context, c *framework.Cluster) (baseline, error) {
	w, err := bench.OpenWatches(ctx, c)
	if err != nil {
		return baseline{}, err
	}
	n, err := cloudConns(c)
	return baseline{watches: w, conns: n}, err
}

// cloudConns counts the established TCP connections to kube-apiserver's
// port on this machine, from their client ends in /proc/net/tcp: every
// process's, the cloud's own loopback client included.
func cloudConns(c *framework.Cluster) (int, error) {
	u, err := url.Parse(c.CloudURL)
	if err != nil {
		return 0, fmt.Errorf("cloud URL: %w", err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, fmt.Errorf("cloud port %q: %w", u.Port(), err)
	}
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	return countConnsTo(data, port), nil
}

// countConnsTo counts the established connections of a /proc/net/tcp
// table whose remote port is port.
func countConnsTo(table []byte, port int) int {
	want := fmt.Sprintf(":%04X", port)
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		// sl local_address rem_address st ...
		f := strings.Fields(sc.Text())
		if len(f) > 3 && strings.HasSuffix(f[2], want) && f[3] == tcpEstablished {
			n++
		}
	}
	return n
}
