//go:build e2e

package lease

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestLeaseCause names a failed renewal's error the same way on every node:
// its HTTP status when one was answered, its addresses replaced.
func TestLeaseCause(t *testing.T) {
	lease := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"conflict", apierrors.NewConflict(lease, "fleet-007", errors.New("the object has been modified")),
			`HTTP 409 Conflict: Operation cannot be fulfilled on leases.coordination.k8s.io "NODE": the object has been modified`},
		{"unavailable", apierrors.NewServiceUnavailable("the cloud link is down"), "HTTP 503 ServiceUnavailable: the cloud link is down"},
		{"refused", fmt.Errorf("renew: %w", &url.Error{Op: "Put", URL: "https://127.0.0.1:40123/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fleet-001",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40123}, Err: errors.New("connection refused")}}),
			`no HTTP status: Put: dial tcp ADDR: connection refused`},
		{"other", errors.New("lease fleet-042 on [::1]:6443 lost"), "no HTTP status: lease NODE on ADDR lost"},
		{"long", errors.New(strings.Repeat("x", 300)), "no HTTP status: " + strings.Repeat("x", CauseMax-len("no HTTP status: ")) + "…"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cause(tt.err); got != tt.want {
				t.Errorf("Cause: got %q, want %q", got, tt.want)
			}
		})
	}
}
