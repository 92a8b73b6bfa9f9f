package pool

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHolder(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Holder
		wantErr  bool
	}{
		{"ipv4", "edge-1@10.0.0.1:10552", Holder{"edge-1", "10.0.0.1:10552"}, false},
		{"ipv6", "edge-1.site@[fd00::1]:10552", Holder{"edge-1.site", "[fd00::1]:10552"}, false},
		{"no separator", "edge-1", Holder{}, true},
		{"empty", "", Holder{}, true},
		{"upper-case node", "Edge-1@10.0.0.1:1", Holder{}, true},
		{"host name, not IP", "edge-1@edge-1:10552", Holder{}, true},
		{"no port", "edge-1@10.0.0.1", Holder{}, true},
		{"port zero", "edge-1@10.0.0.1:0", Holder{}, true},
		{"port too large", "edge-1@10.0.0.1:65536", Holder{}, true},
		{"two separators", "edge-1@10.0.0.1:1@x", Holder{}, true},
		{"too long", strings.Repeat("a", maxHolderLen) + "@10.0.0.1:1", Holder{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseHolder(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseHolder(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadHolder) {
				t.Errorf("error %v is not ErrBadHolder", err)
			}
			if !tc.wantErr && got != tc.want {
				t.Errorf("ParseHolder(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if !tc.wantErr && got.String() != tc.in {
				t.Errorf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func FuzzParseHolder(f *testing.F) {
	for _, s := range []string{"edge-1@10.0.0.1:10552", "a@[::1]:1", "@", "x@y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHolder(s)
		if err != nil {
			return
		}
		if h.String() != s {
			t.Fatalf("ParseHolder(%q).String() = %q", s, h.String())
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("parsed holder %+v does not validate: %v", h, err)
		}
	})
}
