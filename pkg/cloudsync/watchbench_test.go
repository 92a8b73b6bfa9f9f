package cloudsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// podWatchStream is a watch response of the pods of podListPage, each an
// ADDED event encoded as kube-apiserver does: kind before apiVersion.
func podWatchStream(b *testing.B) []byte {
	b.Helper()
	var l corev1.PodList
	if err := json.Unmarshal(podListPage(b, listPageSize), &l); err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	for _, p := range l.Items {
		obj, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		out.WriteString(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1",`)
		out.Write(obj[1:])
		out.WriteString("}\n")
	}
	return out.Bytes()
}

// BenchmarkWatchDecode turns a watch response of 500 pods into stored
// objects through the decoders the REST client's Watch stacks: framer,
// event envelope, object.
func BenchmarkWatchDecode(b *testing.B) {
	stream := podWatchStream(b)
	info := newRawNegotiator(&protoWatches{}).info[0]
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		frames := info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
		d := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), info.Serializer)
		n := 0
		for {
			_, obj, err := d.Decode()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ToObject(obj); err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != listPageSize {
			b.Fatalf("got %d events, want %d", n, listPageSize)
		}
	}
}

// BenchmarkProtoBookmarkDecode decodes a pod watch's bookmark sent in
// protobuf and reads it, as every watch a node holds does once a minute.
func BenchmarkProtoBookmarkDecode(b *testing.B) {
	s := protoSerializer{watches: &protoWatches{}}
	data := encodeAs(b, cloudProto, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "78"}}, corev1.SchemeGroupVersion.WithKind("Pod"))
	b.ReportAllocs()
	for b.Loop() {
		obj, _, err := s.Decode(data, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := BookmarkOf(obj); err != nil {
			b.Fatal(err)
		}
	}
}
