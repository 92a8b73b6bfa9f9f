package cloudsync

import (
	"errors"
	"fmt"
	"io"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// watchReadSize is how many bytes a frame reader asks the body for at a
// time (bytes); a frame larger than its buffer doubles the buffer.
const watchReadSize = 64 << 10

// watchFramer splits a watch response into its events, JSON objects, by
// matching brackets: the one walk that validates an event's object is
// rawSerializer's, so no byte of the stream is scanned by a full JSON
// scanner more than once.
type watchFramer struct{}

func (watchFramer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &frameReader{r: r}
}

func (watchFramer) NewFrameWriter(w io.Writer) io.Writer { return w }

// frameReader returns one event per Read, as the streaming decoder
// expects of a framer: if data is too short, the start of the event and
// io.ErrShortBuffer, then the rest on the next Reads.
type frameReader struct {
	r      io.ReadCloser
	buf    []byte // read from r and not yet returned
	remain int    // bytes of buf's head that finish a frame already begun
	scan   jsonscan.FrameScanner
	eof    error // r's error, once it returned one
}

func (f *frameReader) Read(data []byte) (int, error) {
	if f.remain == 0 {
		n, err := f.frame()
		if err != nil {
			return 0, err
		}
		f.remain = n
	}
	n := copy(data, f.buf[:f.remain])
	f.buf, f.remain = f.buf[n:], f.remain-n
	if f.remain > 0 {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// frame reads until buf begins with a whole event and returns its length.
func (f *frameReader) frame() (int, error) {
	for {
		n, err := f.scan.Len(f.buf)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, jsonscan.ErrIncomplete) {
			return 0, fmt.Errorf("watch stream: %w", err)
		}
		if f.eof != nil {
			if len(bytesTrim(f.buf)) > 0 && errors.Is(f.eof, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, f.eof
		}
		f.fill()
	}
}

// fill reads more of r after buf, growing buf's room as needed.
func (f *frameReader) fill() {
	if cap(f.buf)-len(f.buf) < watchReadSize/2 {
		grown := make([]byte, len(f.buf), 2*len(f.buf)+watchReadSize)
		copy(grown, f.buf)
		f.buf = grown
	}
	n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf = f.buf[:len(f.buf)+n]
	if err != nil {
		f.eof = err
	}
}

func (f *frameReader) Close() error { return f.r.Close() }

// bytesTrim is b without JSON whitespace.
func bytesTrim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	return b
}

// watchEventSerializer decodes watch event envelopes in one walk that
// leaves the object to rawSerializer; anything else goes to the metav1
// serializer it wraps.
type watchEventSerializer struct {
	runtime.Serializer
}

// watchEventGVK is what a decoded envelope is reported as.
var watchEventGVK = schema.GroupVersionKind{Version: "v1", Kind: "WatchEvent"}

func (s watchEventSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	ev, ok := into.(*metav1.WatchEvent)
	if !ok {
		return s.Serializer.Decode(data, defaults, into)
	}
	typ, obj, err := jsonscan.SplitWatchEvent(data)
	if err != nil {
		return nil, nil, fmt.Errorf("decode watch event: %w", err)
	}
	// obj is a slice of the stream decoder's buffer, read before the next
	// frame reuses it: rawSerializer keeps a copy.
	ev.Type, ev.Object = typ, runtime.RawExtension{Raw: obj}
	gvk := watchEventGVK
	return ev, &gvk, nil
}
