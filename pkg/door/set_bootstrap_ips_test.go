package door

import (
	"net"
	"slices"
	"testing"
)

// A link-local pods' door is named in the bootstrapped certificate only
// when the extra SANs list it, and warned about otherwise.
func TestBootstrapIPs(t *testing.T) {
	for _, tc := range []struct {
		name, door string
		extra      []string
		want       []string
		wantWarn   bool
	}{
		{name: "per-node door", door: "192.0.2.7:10551", want: []string{"192.0.2.7"}},
		{name: "link-local door", door: "169.254.20.10:10551", extra: []string{"10.1.2.3"}, want: []string{"10.1.2.3"}, wantWarn: true},
		{name: "link-local door listed", door: "169.254.20.10:10551", extra: []string{"10.1.2.3", "169.254.20.10"},
			want: []string{"10.1.2.3", "169.254.20.10"}},
		{name: "wildcard door", door: "0.0.0.0:10551", extra: []string{"10.1.2.3"}, want: []string{"10.1.2.3"}},
		{name: "duplicate and bad SANs", door: "192.0.2.7:10551", extra: []string{"192.0.2.7", "node-1"}, want: []string{"192.0.2.7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BootstrapIPs(tc.door, tc.extra)
			if !slices.EqualFunc(got, tc.want, func(ip net.IP, s string) bool { return ip.Equal(net.ParseIP(s)) }) {
				t.Errorf("IP SANs: got %v, want %v", got, tc.want)
			}
			if warn := SharedAddressWarning(tc.door, tc.extra) != ""; warn != tc.wantWarn {
				t.Errorf("shared address warning: got %v, want %v", warn, tc.wantWarn)
			}
		})
	}
}
