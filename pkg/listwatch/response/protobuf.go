package response

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// ProtobufInfo is apimachinery's protobuf serializer with its watch stream
// serializer (raw protobuf WatchEvents in 4-byte big-endian length frames).
var ProtobufInfo = mustProtobufInfo()

func mustProtobufInfo() runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), MediaTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		panic("client-go scheme has no protobuf serializer")
	}
	return info
}

// ProtobufWatchFrame frames a WatchEvent whose object is the protobuf
// encoded obj with apimachinery's protobuf stream serializer.
func ProtobufWatchFrame(t watch.EventType, obj []byte) ([]byte, error) {
	var buf bytes.Buffer
	enc := streaming.NewEncoder(ProtobufInfo.StreamSerializer.Framer.NewFrameWriter(&buf), ProtobufInfo.StreamSerializer.Serializer)
	ev := &metav1.WatchEvent{Type: string(t), Object: runtime.RawExtension{Raw: obj}}
	if err := enc.Encode(ev); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// protobufStatus encodes st as the protobuf serializer does (v1 Status).
func protobufStatus(st *metav1.Status) ([]byte, error) {
	enc := scheme.Codecs.EncoderForVersion(ProtobufInfo.Serializer, metav1.SchemeGroupVersion)
	var buf bytes.Buffer
	if err := enc.Encode(st, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ProtobufMagic starts every Kubernetes protobuf body: "k8s\0", then a
// runtime.Unknown envelope around the object.
var ProtobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}
