package metastore

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestMeta(t *testing.T) {
	type put struct {
		key   string
		value []byte
	}
	tests := []struct {
		name    string
		puts    []put
		key     string
		want    []byte
		wantErr error
	}{
		{"get after put", []put{{"discovery", []byte(`{"groups":[]}`)}}, "discovery", []byte(`{"groups":[]}`), nil},
		{"put overwrites", []put{{"version", []byte("v1")}, {"version", []byte("v2")}}, "version", []byte("v2"), nil},
		{"empty value is stored", []put{{"empty", []byte{}}}, "empty", []byte{}, nil},
		{"unknown key", []put{{"other", []byte("x")}}, "missing", nil, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MustOpen(t, testDBPath(t))
			ctx := context.Background()
			for _, p := range tt.puts {
				if err := s.PutMeta(ctx, p.key, p.value); err != nil {
					t.Fatalf("PutMeta(%s): got error %v, want nil", p.key, err)
				}
			}
			got, err := s.GetMeta(ctx, tt.key)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("GetMeta(%s): got error %v, want %v", tt.key, err, tt.wantErr)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("GetMeta(%s): got %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}
