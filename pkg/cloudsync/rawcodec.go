package cloudsync

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// rawObject is one cloud object as the cloud encoded it in JSON, not yet
// decoded: toObject turns it into the stored form with one decode.
// APIVersion and Kind are the enclosing list's, for items that leave out
// their own (as kube-apiserver's lists of built-in kinds do); "" otherwise.
type rawObject struct {
	Raw        []byte
	APIVersion string
	Kind       string
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

// listSuffix ends the kind of a list of objects of another kind.
const listSuffix = "List"

// decodeList splits a JSON LIST response into its metadata and items,
// keeping each item's bytes as they came. The items are copied out of
// body, so body can be dropped afterwards.
func decodeList(body []byte) (*rawList, error) {
	var l struct {
		APIVersion string               `json:"apiVersion"`
		Kind       string               `json:"kind"`
		Metadata   metav1.ListMeta      `json:"metadata"`
		Items      []stdjson.RawMessage `json:"items"`
	}
	if err := utiljson.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("decode list: %w", err)
	}
	kind, _ := strings.CutSuffix(l.Kind, listSuffix)
	out := &rawList{ListMeta: l.Metadata, Items: make([]runtime.Object, len(l.Items))}
	for i, it := range l.Items {
		out.Items[i] = &rawObject{Raw: it, APIVersion: l.APIVersion, Kind: kind}
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

func (s rawSerializer) Decode(data []byte, _ *schema.GroupVersionKind, _ runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var tm metav1.TypeMeta
	if err := utiljson.Unmarshal(data, &tm); err != nil {
		return nil, nil, fmt.Errorf("decode object: %w", err)
	}
	if tm.Kind == "Status" && tm.APIVersion == "v1" {
		return s.status.Decode(data, nil, &metav1.Status{})
	}
	gvk := tm.GroupVersionKind()
	return &rawObject{Raw: append([]byte(nil), data...)}, &gvk, nil
}

func (rawSerializer) Encode(runtime.Object, io.Writer) error { return errRawEncode }

func (rawSerializer) Identifier() runtime.Identifier { return "cloudsync-raw-json" }

// rawNegotiator offers rawSerializer for application/json, and decodes
// watch event envelopes with the metav1 scheme.
type rawNegotiator struct {
	info []runtime.SerializerInfo
}

func newRawNegotiator() rawNegotiator {
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
			Serializer:    meta,
			Framer:        json.Framer,
		},
	}}}
}

func (n rawNegotiator) SupportedMediaTypes() []runtime.SerializerInfo { return n.info }

func (rawNegotiator) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (rawNegotiator) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}
