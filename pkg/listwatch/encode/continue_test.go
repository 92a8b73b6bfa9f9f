package encode

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// rawToken builds a continue token by hand, the way kube-apiserver's
// storage.EncodeContinue lays it out.
func rawToken(v string, rv int64, start string) string {
	s, _ := json.Marshal(start)
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"v":%q,"rv":%d,"start":%s}`, v, rv, s)))
}

func TestContinueTokenFormat(t *testing.T) {
	// kube-apiserver's watch cache token for the page after default/web-1.
	want := "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjAsInN0YXJ0IjoiL2RlZmF1bHQvd2ViLTFcdTAwMDAifQ"
	if got := EncodeContinue("default/web-1\x00", 20); got != want {
		t.Errorf("got token %q, want %q", got, want)
	}
	tests := []struct {
		name, token, wantStart string
		wantRV                 int64
		wantErr                string
	}{
		{"round trip", want, "default/web-1\x00", 20, ""},
		{"latest", rawToken("meta.k8s.io/v1", -1, "/x\x00"), "x\x00", -1, ""},
		{"start without slash", rawToken("meta.k8s.io/v1", 5, "a/b"), "a/b", 5, ""},
		{"not base64", "!!", "", 0, "continue key is not valid: illegal base64 data at input byte 0"},
		{"not JSON", "abc", "", 0, "continue key is not valid: invalid character 'i' looking for beginning of value"},
		{"unknown version", rawToken("v2", 5, "/a"), "", 0, "continue key is not valid: server does not recognize this encoded version v2"},
		{"zero rv", rawToken("meta.k8s.io/v1", 0, "/a"), "", 0, "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{"empty start", rawToken("meta.k8s.io/v1", 5, ""), "", 0, "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{"path traversal", rawToken("meta.k8s.io/v1", 5, "/../other"), "", 0, "continue key is not valid: /../other"},
		{"unclean path", rawToken("meta.k8s.io/v1", 5, "a//b"), "", 0, "continue key is not valid: a//b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, rv, err := DecodeContinue(tt.token)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || start != tt.wantStart || rv != tt.wantRV {
				t.Errorf("got %q %d %v, want %q %d", start, rv, err, tt.wantStart, tt.wantRV)
			}
		})
	}
}

// FuzzDecodeContinue checks that any token either fails or decodes to a
// start key that cannot climb out of the list and re-encodes to itself.
func FuzzDecodeContinue(f *testing.F) {
	f.Add(EncodeContinue("default/web-1\x00", 20))
	f.Add(rawToken("meta.k8s.io/v1", -1, "/../x"))
	f.Add("abc")
	f.Fuzz(func(t *testing.T, token string) {
		start, rv, err := DecodeContinue(token)
		if err != nil {
			return
		}
		if rv == 0 || strings.HasPrefix(start, "../") || strings.Contains(start, "/../") || start == ".." {
			t.Fatalf("token %q decoded to %q at %d", token, start, rv)
		}
		again, rv2, err := DecodeContinue(EncodeContinue(start, rv))
		if err != nil || again != start || rv2 != rv {
			t.Fatalf("re-encoding %q at %d gave %q %d %v", start, rv, again, rv2, err)
		}
	})
}
