package cloudsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Watches in protobuf. A watch asks the cloud for protobuf first, as a
// kubelet's clients do, and JSON second: kube-apiserver answers its
// built-in kinds in protobuf and custom resources in JSON. Its bookmarks
// and events then cost the cloud fewer bytes to send and less CPU to
// encode. Objects are still stored and served as the cloud's JSON: each
// one is decoded into its Go type and encoded in JSON, as kube-apiserver
// encodes it, on arrival.
//
// An object whose protobuf does not come back byte for byte from its Go
// type holds something this build does not know (a field of a newer
// cloud): storing it would lose that. Such an object, or one of a kind
// this build does not know, fails its watch and turns protobuf off for
// the client's later watches, which resume from the last durable
// resourceVersion in JSON and get the same event again, whole.

// protoAccept is the Accept header of a watch while protobuf is on.
const protoAccept = runtime.ContentTypeProtobuf + ", " + runtime.ContentTypeJSON

// protoMagic prefixes every protobuf-encoded object kube-apiserver sends
// (its runtime.Unknown envelope follows).
var protoMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// errProtoLossy is returned for a protobuf object that cannot be stored
// without losing part of it.
var errProtoLossy = errors.New("protobuf object this build cannot store whole")

// protoWatches says whether watches may ask for protobuf. It is shared
// by every copy of a RawClient.
type protoWatches struct {
	// off is set, never cleared, once an object came in protobuf that
	// could not be stored whole.
	off atomic.Bool
}

// accept is the Accept header of a new watch.
func (p *protoWatches) accept() string {
	if p.off.Load() {
		return runtime.ContentTypeJSON
	}
	return protoAccept
}

// protoMessage is what the generated types of the built-in kinds are.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// protoSerializer decodes an object the cloud sent in protobuf: a Status
// into *metav1.Status, a bookmark's (no name) into its Go type, anything
// else into a *rawObject holding the object's JSON, as rawSerializer does
// with JSON. It encodes nothing.
type protoSerializer struct {
	watches *protoWatches
}

func (s protoSerializer) Decode(data []byte, _ *schema.GroupVersionKind, _ runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := decodeProto(data)
	if err != nil {
		s.watches.off.Store(true)
		return nil, nil, err
	}
	if st, ok := obj.(*metav1.Status); ok {
		return st, &gvk, nil
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetName() == "" {
		// A bookmark's object: BookmarkOf reads its resourceVersion and
		// annotations from the Go object as decoded. Encoding its kind's
		// whole Go type in JSON by reflection (a Pod's empty spec and
		// status included) was a tenth of a node's steady CPU samples,
		// where every watch delivers a bookmark a minute; ToObject
		// refuses it, as it refused the nameless JSON.
		return obj, &gvk, nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		s.watches.off.Store(true)
		return nil, nil, fmt.Errorf("encode %s as JSON: %w", gvk.Kind, err)
	}
	o, _, err := versioncache.NewTypedObject(raw)
	if err != nil {
		return &rawObject{Raw: raw, err: err}, &gvk, nil // not one to store: its event fails
	}
	return &rawObject{Raw: o.Raw, obj: o}, &gvk, nil
}

// decodeProto reads data, a protobuf object in its envelope, into its Go
// type, and checks that the type holds all of it.
func decodeProto(data []byte) (runtime.Object, schema.GroupVersionKind, error) {
	body, ok := bytes.CutPrefix(data, protoMagic)
	if !ok {
		return nil, schema.GroupVersionKind{}, errors.New("decode protobuf: no envelope")
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(body); err != nil {
		return nil, schema.GroupVersionKind{}, fmt.Errorf("decode protobuf envelope: %w", err)
	}
	gvk := schema.FromAPIVersionAndKind(unk.APIVersion, unk.Kind)
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, gvk, fmt.Errorf("%w: %w", errProtoLossy, err)
	}
	m, ok := obj.(protoMessage)
	if !ok {
		return nil, gvk, fmt.Errorf("%w: %s has no protobuf form", errProtoLossy, gvk)
	}
	if err := m.Unmarshal(unk.Raw); err != nil {
		return nil, gvk, fmt.Errorf("decode protobuf %s: %w", gvk.Kind, err)
	}
	again, err := m.Marshal()
	if err != nil || !bytes.Equal(again, unk.Raw) {
		return nil, gvk, fmt.Errorf("%w: a %s holds fields this build does not know", errProtoLossy, gvk.Kind)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, gvk, nil
}

func (protoSerializer) Encode(runtime.Object, io.Writer) error { return errRawEncode }

func (protoSerializer) Identifier() runtime.Identifier { return "cloudsync-raw-protobuf" }

// protoInfo is the protobuf half of rawNegotiator: objects through
// protoSerializer, watch event envelopes length-delimited, as
// kube-apiserver frames them.
func protoInfo(p *protoWatches) runtime.SerializerInfo {
	return runtime.SerializerInfo{
		MediaType:        runtime.ContentTypeProtobuf,
		MediaTypeType:    "application",
		MediaTypeSubType: "vnd.kubernetes.protobuf",
		Serializer:       protoSerializer{watches: p},
		StreamSerializer: &runtime.StreamSerializerInfo{
			Serializer: protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme),
			Framer:     protobuf.LengthDelimitedFramer,
		},
	}
}
