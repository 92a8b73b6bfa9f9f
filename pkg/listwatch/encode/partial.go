package encode

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/printers"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Kinds of the metadata-only conversions (as=PartialObjectMetadata[List]).
const (
	partialKind     = "PartialObjectMetadata"
	partialListKind = "PartialObjectMetadataList"
)

// metaCodecs encode the meta.k8s.io types (v1 and v1beta1) as
// kube-apiserver's metainternalversion codecs do.
var metaCodecs = newMetaCodecs()

func newMetaCodecs() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddMetaToScheme(s)
	metav1beta1.AddMetaToScheme(s)
	return serializer.NewCodecFactory(s)
}

// Partial converts objects to PartialObjectMetadata, as metadata clients
// ask with as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1.
type Partial struct {
	gv        schema.GroupVersion // meta.k8s.io/v1 or v1beta1
	mediaType string              // JSON, YAML (encoded as JSON) or protobuf
}

// NewPartial returns the negotiated metadata conversion.
func NewPartial(p *response.Partial, mediaType string) *Partial {
	return &Partial{gv: schema.GroupVersion{Group: metav1.GroupName, Version: p.Version}, mediaType: mediaType}
}

// Object returns the PartialObjectMetadata of raw, encoded.
func (p *Partial) Object(raw []byte) ([]byte, error) {
	obj, err := p.partial(raw)
	if err != nil {
		return nil, err
	}
	return p.encode(obj)
}

// partial decodes raw's metadata into a PartialObjectMetadata.
func (p *Partial) partial(raw []byte) (*metav1.PartialObjectMetadata, error) {
	m, err := printers.ObjectMeta(raw)
	if err != nil {
		return nil, err
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: m}
	obj.SetGroupVersionKind(p.gv.WithKind(partialKind))
	return obj, nil
}

// List returns the PartialObjectMetadataList of objs, encoded.
func (p *Partial) List(objs []*versioncache.Object, meta ListMeta) ([]byte, error) {
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatUint(meta.RV, 10), Continue: meta.Continue, RemainingItemCount: meta.Remaining}
	items := make([]metav1.PartialObjectMetadata, 0, len(objs))
	for _, o := range objs {
		obj, err := p.partial(o.Raw)
		if err != nil {
			return nil, err
		}
		items = append(items, *obj)
	}
	var list runtime.Object
	if p.gv.Version == metav1beta1.SchemeGroupVersion.Version {
		list = &metav1beta1.PartialObjectMetadataList{ListMeta: lm, Items: items}
	} else {
		list = &metav1.PartialObjectMetadataList{ListMeta: lm, Items: items}
	}
	list.GetObjectKind().SetGroupVersionKind(p.gv.WithKind(partialListKind))
	return p.encode(list)
}

// encode encodes obj in the negotiated media type (JSON for YAML: the
// responder converts whole bodies).
func (p *Partial) encode(obj runtime.Object) ([]byte, error) {
	mt := response.MediaTypeJSON
	if p.mediaType == response.MediaTypeProtobuf {
		mt = response.MediaTypeProtobuf
	}
	info, ok := runtime.SerializerInfoForMediaType(metaCodecs.SupportedMediaTypes(), mt)
	if !ok {
		return nil, fmt.Errorf("no %s serializer for meta.k8s.io", mt)
	}
	var buf bytes.Buffer
	if err := metaCodecs.EncoderForVersion(info.Serializer, p.gv).Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// TypeName is how kube-apiserver's 406 for a metadata conversion of the
// wrong shape names the object it read (%T of an internal object, as in
// "*core.PodList"; custom resources are unstructured).
func TypeName(res Resource, list bool) string {
	suffix := ""
	if list {
		suffix = "List"
	}
	if !scheme.Scheme.Recognizes(res.GroupVersionKind()) {
		return "*unstructured.Unstructured" + suffix
	}
	pkg := "core"
	if g := res.GVR.Group; g != "" {
		pkg, _, _ = strings.Cut(g, ".")
	}
	return "*" + pkg + "." + res.Kind + suffix
}
