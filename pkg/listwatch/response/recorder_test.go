package response

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRecorderKeepsUpToLimit(t *testing.T) {
	tests := []struct {
		name         string
		writes       []string
		wantBody     string
		wantOverflow bool
	}{
		{"within", []string{"ab", "cd"}, "abcd", false},
		{"at the limit", []string{"abcde"}, "abcde", false},
		{"past it", []string{"abc", "def"}, "abc", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := &Recorder{ResponseWriter: w, Limit: 5}
			for _, s := range tt.writes {
				if _, err := r.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
			}
			if got := string(r.Body()); got != tt.wantBody || r.Overflow != tt.wantOverflow {
				t.Errorf("got body %q overflow %v, want %q %v", got, r.Overflow, tt.wantBody, tt.wantOverflow)
			}
			if r.Status != http.StatusOK || w.Body.Len() != len(join(tt.writes)) {
				t.Errorf("got status %d and %d bytes passed on, want 200 and all %d", r.Status, w.Body.Len(), len(join(tt.writes)))
			}
		})
	}
}

func join(ss []string) string {
	out := ""
	for _, s := range ss {
		out += s
	}
	return out
}
