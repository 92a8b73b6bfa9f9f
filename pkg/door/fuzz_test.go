package door

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func FuzzParseClaims(f *testing.F) {
	f.Add(jwt(f, boundClaims(1_800_000_000, "a", "p", "u1")))
	f.Add(jwt(f, map[string]any{"exp": 1.5e9}))
	f.Add(jwt(f, map[string]any{"exp": "soon", "kubernetes.io": 3}))
	f.Add("a.b.c")
	f.Add("e30.e30.")
	f.Add("not a token")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := parseClaims(token)
		if err != nil {
			if c != (claims{}) {
				t.Fatalf("got claims %+v with error %v", c, err)
			}
			return
		}
		if strings.Count(token, ".") != 2 {
			t.Fatalf("accepted %q, which is not three parts", token)
		}
		if !c.Exp.IsZero() && c.Exp.Before(time.Unix(0, 0)) {
			t.Fatalf("got exp %v before the epoch", c.Exp)
		}
	})
}

func FuzzLoopbackHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1:10550", "localhost", "[::1]:80", "::1", "evil.example", "[::ffff:127.0.0.1]",
		"127.0.0.1.evil.example", "[fe80::1%lo]:1", "", ":80", "localhost:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		ok := LoopbackHost(host)
		if ok && strings.ContainsAny(host, "/@?#") {
			t.Fatalf("accepted %q", host)
		}
		if ok && strings.Contains(strings.ToLower(host), ".example") {
			t.Fatalf("accepted a DNS name %q", host)
		}
		r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
		r.Host = host
		w := httptest.NewRecorder()
		if checkHost(w, r) != ok {
			t.Fatalf("checkHost and LoopbackHost disagree on %q", host)
		}
	})
}
