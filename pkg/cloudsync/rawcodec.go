package cloudsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/apiserver-lite/apiserver-lite/pkg/jsonscan"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache/kinds"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// rawObject is one cloud object as the cloud encoded it in JSON. An item
// of a LIST page was read with the page (scan), and ToObject makes it a
// stored object without reading it again.
// APIVersion and Kind are the enclosing list's, for items that leave out
// their own (as kube-apiserver's lists of built-in kinds do); "" otherwise.
// A watched object was decoded when it arrived: obj is its stored form,
// or err why it has none (a bookmark, which has no name, say).
type rawObject struct {
	Raw        []byte
	APIVersion string
	Kind       string

	scan *jsonscan.Scan
	obj  *versioncache.Object
	err  error
}

func (o *rawObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (o *rawObject) DeepCopyObject() runtime.Object {
	c := *o
	c.Raw = append([]byte(nil), o.Raw...)
	return &c
}

// rawList is one page of a cloud LIST: its metadata and its items as
// *rawObject, so meta.ListAccessor and meta.EachListItem work on it.
type rawList struct {
	metav1.ListMeta
	Items []runtime.Object
}

func (l *rawList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (l *rawList) DeepCopyObject() runtime.Object {
	c := &rawList{ListMeta: *l.ListMeta.DeepCopy(), Items: make([]runtime.Object, len(l.Items))}
	for i, it := range l.Items {
		c.Items[i] = it.DeepCopyObject()
	}
	return c
}

// decodeList splits a JSON LIST response into its metadata and items in
// one walk that also reads each item (jsonscan.ReadList), keeping each
// item's bytes as they came: they are slices of body, which ToObject
// copies, so body can be dropped afterwards.
func decodeList(body []byte) (*rawList, error) {
	l, err := kinds.Builtin.ReadList(body)
	if err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	var lm metav1.ListMeta
	for _, m := range l.Metadata {
		if err := utiljson.Unmarshal(m, &lm); err != nil {
			return nil, fmt.Errorf("decode list metadata: %w", err)
		}
	}
	kind := jsonscan.ItemKind(l.Kind)
	out := &rawList{ListMeta: lm, Items: make([]runtime.Object, len(l.Items))}
	items := make([]rawObject, len(l.Items))
	for i, it := range l.Items {
		items[i] = rawObject{Raw: it, APIVersion: l.APIVersion, Kind: kind, scan: &l.Scans[i]}
		out.Items[i] = &items[i]
	}
	return out, nil
}

// rawSerializer decodes what the cloud sends in JSON: a Status (an error,
// or a watch ERROR event) into *metav1.Status, anything else into a
// *rawObject holding a copy of the bytes. It encodes nothing: the syncers
// only read.
type rawSerializer struct {
	status runtime.Decoder // decodes metav1.Status
}

// errRawEncode is returned by the encoder half of rawSerializer.
var errRawEncode = errors.New("raw cloud serializer does not encode")

// Decode reads an object in one walk into its stored form, kept with
// it; what is not a storable object (a Status, a bookmark) is decoded as
// before, its TypeMeta first.
func (s rawSerializer) Decode(data []byte, _ *schema.GroupVersionKind, _ runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	o, tm, err := versioncache.NewTypedObject(data)
	if err == nil && !isStatus(tm) {
		if sameStart(o.Raw, data) {
			o.Raw = bytes.Clone(o.Raw) // data is the decoder's buffer
		}
		gvk := tm.GroupVersionKind()
		return &rawObject{Raw: o.Raw, obj: o}, &gvk, nil
	}
	objErr := err
	if err := utiljson.Unmarshal(data, &tm); err != nil {
		return nil, nil, fmt.Errorf("decode object: %w", err)
	}
	if isStatus(tm) {
		return s.status.Decode(data, nil, &metav1.Status{})
	}
	gvk := tm.GroupVersionKind()
	return &rawObject{Raw: bytes.Clone(data), err: objErr}, &gvk, nil
}

// isStatus reports whether tm is a metav1.Status's.
func isStatus(tm metav1.TypeMeta) bool { return tm.Kind == "Status" && tm.APIVersion == "v1" }

// sameStart reports whether a and b begin at the same byte in memory.
func sameStart(a, b []byte) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

func (rawSerializer) Encode(runtime.Object, io.Writer) error { return errRawEncode }

func (rawSerializer) Identifier() runtime.Identifier { return "cloudsync-raw-json" }

// rawNegotiator offers rawSerializer for application/json, decoding watch
// event envelopes with the metav1 scheme, and protoSerializer for
// application/vnd.kubernetes.protobuf (protoInfo).
type rawNegotiator struct {
	info []runtime.SerializerInfo
}

func newRawNegotiator(p *protoWatches) rawNegotiator {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	meta := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{})
	return rawNegotiator{info: []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       rawSerializer{status: meta},
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer:    watchEventSerializer{meta},
			Framer:        watchFramer{},
		},
	}, protoInfo(p)}}
}

func (n rawNegotiator) SupportedMediaTypes() []runtime.SerializerInfo { return n.info }

func (rawNegotiator) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (rawNegotiator) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}
