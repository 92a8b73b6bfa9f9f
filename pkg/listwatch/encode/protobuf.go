package encode

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Protobuf answers. Built-in kinds (those client-go's scheme knows) are
// served in application/vnd.kubernetes.protobuf when that is the first
// acceptable Accept clause, as kube-apiserver negotiates; custom resources
// and other unknown kinds are JSON only, as kube-apiserver serves them.
// Each object is decoded from its cached JSON and encoded to protobuf once
// per version (versioncache.Object.Encoded), and each watch event's frame
// is shared by the watchers writing it (versioncache.Event.EncodedFrame),
// so GET, LIST and every watcher reuse the same bytes.

// ProtobufKey names the cached protobuf encodings.
const ProtobufKey = "protobuf"

// Protobuf encodes one built-in resource's objects as kube-apiserver's
// protobuf serializer does.
type Protobuf struct {
	gvk     schema.GroupVersionKind
	encoder runtime.Encoder // versioning codec to gvk's version around the protobuf serializer
	// listMetaField and listItemsField are the protobuf field numbers of
	// the kind's List metadata and items.
	listMetaField, listItemsField protowire.Number
}

var protoCodecs sync.Map // schema.GroupVersionKind -> *Protobuf, or nil for kinds without protobuf

// ProtobufFor returns the codec for res's kind, nil when the kind is not a
// built-in one served in protobuf.
func ProtobufFor(res Resource) *Protobuf {
	gvk := res.GroupVersionKind()
	if c, ok := protoCodecs.Load(gvk); ok {
		return c.(*Protobuf)
	}
	c := newProtoCodec(gvk)
	protoCodecs.Store(gvk, c)
	return c
}

func newProtoCodec(gvk schema.GroupVersionKind) *Protobuf {
	if !scheme.Scheme.Recognizes(gvk) {
		return nil
	}
	list, err := scheme.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil
	}
	metaField, ok1 := protoField(list, "ListMeta")
	itemsField, ok2 := protoField(list, "Items")
	if !ok1 || !ok2 {
		return nil
	}
	return &Protobuf{
		gvk:            gvk,
		encoder:        scheme.Codecs.EncoderForVersion(response.ProtobufInfo.Serializer, gvk.GroupVersion()),
		listMetaField:  metaField,
		listItemsField: itemsField,
	}
}

// protoField reads the field number of a generated struct's field from its
// protobuf tag ("bytes,2,rep,name=items").
func protoField(obj runtime.Object, name string) (protowire.Number, bool) {
	v := reflect.TypeOf(obj)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	f, ok := v.FieldByName(name)
	if !ok {
		return 0, false
	}
	parts := strings.Split(f.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return 0, false
	}
	return protowire.Number(n), true
}

// Object returns o's protobuf encoding, computed once per object version.
// The typed object is decoded from the cached JSON without defaulting or
// conversion, as the cloud sent it.
func (c *Protobuf) Object(o *versioncache.Object) ([]byte, error) {
	return o.Encoded(ProtobufKey, func(raw []byte) ([]byte, error) {
		obj, err := scheme.Scheme.New(c.gvk)
		if err != nil {
			return nil, err
		}
		if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, &c.gvk, obj); err != nil {
			return nil, fmt.Errorf("decode %s %s/%s: %w", c.gvk.Kind, o.Namespace, o.Name, err)
		}
		return c.encode(obj)
	})
}

// encodeBufs holds the buffers encode grows, so that each encoding only
// allocates its exact size: the result is cached for the object's life.
var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuf is the largest buffer, in bytes, put back into encodeBufs:
// one huge object must not pin its buffer for good.
const maxPooledBuf = 1 << 20

// encode encodes obj with the protobuf serializer, k8s\0 prefix included,
// into a new slice of exactly its length.
func (c *Protobuf) encode(obj runtime.Object) ([]byte, error) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuf {
			buf.Reset()
			encodeBufs.Put(buf)
		}
	}()
	if err := c.encoder.Encode(obj, buf); err != nil {
		return nil, err
	}
	return append(make([]byte, 0, buf.Len()), buf.Bytes()...), nil
}

// List returns the parts of a <Kind>List of objs encoded as the protobuf
// serializer encodes a typed list, reusing each item's cached encoding
// without copying it: the k8s\0 prefix and a runtime.Unknown whose raw
// holds the list metadata and the items' raw messages. The envelope is
// written here, field by field as runtime.Unknown marshals it (type meta,
// raw, then the always present empty content encoding and content type),
// so the items are not copied into one buffer first.
func (c *Protobuf) List(objs []*versioncache.Object, m ListMeta) ([][]byte, error) {
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatUint(m.RV, 10), Continue: m.Continue, RemainingItemCount: m.Remaining}
	lmb, err := lm.Marshal()
	if err != nil {
		return nil, err
	}
	meta := protowire.AppendTag(make([]byte, 0, len(lmb)+8), c.listMetaField, protowire.BytesType)
	meta = protowire.AppendBytes(meta, lmb)
	parts := make([][]byte, 0, 3+2*len(objs))
	parts = append(parts, nil, meta) // parts[0] is the head, once the size is known
	size := len(meta)
	for _, o := range objs {
		b, err := c.Object(o)
		if err != nil {
			return nil, err
		}
		item, err := unknownRaw(b)
		if err != nil {
			return nil, err
		}
		tag := protowire.AppendTag(nil, c.listItemsField, protowire.BytesType)
		tag = protowire.AppendVarint(tag, uint64(len(item)))
		parts = append(parts, tag, item)
		size += len(tag) + len(item)
	}
	tm := runtime.TypeMeta{APIVersion: c.gvk.GroupVersion().String(), Kind: c.gvk.Kind + "List"}
	tmb, err := tm.Marshal()
	if err != nil {
		return nil, err
	}
	head := append([]byte(nil), response.ProtobufMagic...)
	head = protowire.AppendTag(head, 1, protowire.BytesType)
	head = protowire.AppendBytes(head, tmb)
	head = protowire.AppendTag(head, 2, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(size))
	parts[0] = head
	return append(parts, unknownTail), nil
}

// unknownTail ends a runtime.Unknown: empty contentEncoding (3) and
// contentType (4), which it always marshals.
var unknownTail = []byte{byte(3<<3 | protowire.BytesType), 0, byte(4<<3 | protowire.BytesType), 0}

// unknownRaw returns, without copying, the raw message inside a protobuf
// serializer encoding: the bytes field (2) of the runtime.Unknown after the
// k8s\0 prefix.
func unknownRaw(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, response.ProtobufMagic) {
		return nil, fmt.Errorf("protobuf object without the %q prefix", response.ProtobufMagic)
	}
	b = b[len(response.ProtobufMagic):]
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num == 2 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			return v, nil
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
	}
	return nil, nil // an empty message
}

// EventFrame returns the length-prefixed protobuf WatchEvent of ev as
// type t, encoded once per event and shared by every watcher.
func (c *Protobuf) EventFrame(ev *versioncache.Event, t watch.EventType) ([]byte, error) {
	return ev.EncodedFrame(ProtobufKey, t, func() ([]byte, error) {
		obj, err := c.Object(ev.Object)
		if err != nil {
			return nil, err
		}
		return response.ProtobufWatchFrame(t, obj)
	})
}

// BookmarkFrame is a BOOKMARK carrying an empty object of the kind with
// only metadata.resourceVersion set, and the k8s.io/initial-events-end
// annotation when initialEventsEnd, as kube-apiserver's cacher sends.
func (c *Protobuf) BookmarkFrame(rv uint64, initialEventsEnd bool) ([]byte, error) {
	obj, err := scheme.Scheme.New(c.gvk)
	if err != nil {
		return nil, err
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	acc.SetResourceVersion(strconv.FormatUint(rv, 10))
	if initialEventsEnd {
		acc.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	b, err := c.encode(obj)
	if err != nil {
		return nil, err
	}
	return response.ProtobufWatchFrame(watch.Bookmark, b)
}
