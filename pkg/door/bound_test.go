package door

import (
	"errors"
	"testing"
)

func TestCheckBound(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		unbound bool
		fails   bool
	}{
		{addr: "127.0.0.1:10551"},
		{addr: "0.0.0.0:10551"},
		{addr: "localhost:10551"},
		{addr: "192.0.2.1:10551", unbound: true}, // TEST-NET-1, never assigned here
		{addr: "no-port", fails: true},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			err := CheckBound(tc.addr)
			if got := errors.Is(err, ErrAddressNotBound); got != tc.unbound {
				t.Errorf("CheckBound(%q) = %v: not bound got %v, want %v", tc.addr, err, got, tc.unbound)
			}
			if got := err != nil; got != (tc.unbound || tc.fails) {
				t.Errorf("CheckBound(%q) = %v: got error %v, want %v", tc.addr, err, got, tc.unbound || tc.fails)
			}
		})
	}
}
