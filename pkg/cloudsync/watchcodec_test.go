package cloudsync

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restclientwatch "k8s.io/client-go/rest/watch"
)

func TestFrameReader(t *testing.T) {
	ev := func(name string) string {
		return `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + name +
			`","resourceVersion":"3"},"data":{"k":"a \"}\" {[ \\"}}}`
	}
	long := strings.Repeat("x", 3*watchReadSize)
	tests := []struct {
		name    string
		stream  string
		want    string // names decoded
		wantErr string // "" for a clean end
	}{
		{"two events", ev("a") + "\n" + ev("b") + "\n", "a b", ""},
		{"no newline between", ev("a") + ev("b"), "a b", ""},
		{"event larger than a read", ev(long), long, ""},
		{"cut short", ev("a") + "\n" + ev("b")[:40], "a", "unexpected EOF"},
		{"not an object", ev("a") + "\n[1]", "a", "watch stream"},
		{"invalid object", `{"type":"ADDED","object":{"metadata":{"name":"a"},}}`, "", "decode object"},
		{"unknown type", `{"type":"MOVED","object":{}}`, "", "invalid watch event type"},
	}
	info := newRawNegotiator(&protoWatches{}).info[0]
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// one byte per Read: every frame is assembled from pieces.
			body := io.NopCloser(iotest.OneByteReader(strings.NewReader(tt.stream)))
			frames := info.StreamSerializer.Framer.NewFrameReader(body)
			d := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), info.Serializer)
			var names []string
			var err error
			for {
				_, o, derr := d.Decode()
				if derr != nil {
					err = derr
					break
				}
				so, oerr := ToObject(o)
				if oerr != nil {
					err = oerr
					break
				}
				names = append(names, so.Name)
			}
			if got := strings.Join(names, " "); got != tt.want {
				t.Errorf("got names %.40q, want %.40q", got, tt.want)
			}
			switch {
			case tt.wantErr == "" && !errors.Is(err, io.EOF):
				t.Errorf("got error %v, want EOF", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The frame reader hands a frame longer than the caller's buffer in
// pieces, each but the last with io.ErrShortBuffer.
func TestFrameReaderShortBuffer(t *testing.T) {
	frame := `{"type":"ADDED","object":{}}`
	r := watchFramer{}.NewFrameReader(io.NopCloser(strings.NewReader(frame + "\n")))
	var got bytes.Buffer
	buf := make([]byte, 10)
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err == nil {
			break
		}
		if !errors.Is(err, io.ErrShortBuffer) {
			t.Fatalf("got error %v, want io.ErrShortBuffer", err)
		}
	}
	if got.String() != frame {
		t.Errorf("got frame %q, want %q", got.String(), frame)
	}
}
