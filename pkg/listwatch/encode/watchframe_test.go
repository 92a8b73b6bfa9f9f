package encode

import (
	"bytes"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
)

// TestProtobufFrameHead checks that the head plus the object is the frame
// the protobuf stream serializer writes, for objects whose lengths take
// one to three varint bytes.
func TestProtobufFrameHead(t *testing.T) {
	for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark} {
		for _, n := range []int{0, 1, 127, 128, 9000, 70000} {
			t.Run(fmt.Sprintf("%s/%d", typ, n), func(t *testing.T) {
				obj := bytes.Repeat([]byte{'k'}, n)
				want, err := response.ProtobufWatchFrame(typ, obj)
				if err != nil {
					t.Fatal(err)
				}
				got := append(protobufFrameHead(typ, n), obj...)
				if !bytes.Equal(got, want) {
					t.Errorf("%s of %d bytes: got frame % x..., want % x...", typ, n, got[:min(len(got), 24)], want[:min(len(want), 24)])
				}
			})
		}
	}
}
