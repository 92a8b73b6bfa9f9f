package encode

import (
	"encoding/binary"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Field numbers of metav1.WatchEvent (type, object) and of
// runtime.RawExtension (raw), as their generated marshallers write them.
const (
	watchEventTypeField   protowire.Number = 1
	watchEventObjectField protowire.Number = 2
	rawExtensionRawField  protowire.Number = 1
)

// frameLengthBytes is the big-endian length prefix of a protobuf watch
// frame (the length-delimited framer of the protobuf stream serializer).
const frameLengthBytes = 4

// WriteObjectFrame writes the length-prefixed protobuf WatchEvent of type
// t around o's cached protobuf encoding, the same bytes EventFrame builds,
// without first copying the object into a frame of its own. It suits the
// synthetic initial events of a watch, whose frames no other watcher
// shares; a buffered w then copies each object once.
func (c *Protobuf) WriteObjectFrame(w io.Writer, o *versioncache.Object, t watch.EventType) error {
	obj, err := c.Object(o)
	if err != nil {
		return err
	}
	if _, err := w.Write(protobufFrameHead(t, len(obj))); err != nil {
		return err
	}
	_, err = w.Write(obj)
	return err
}

// protobufFrameHead is everything of a protobuf watch frame before the
// object's bytes: the length prefix, the event type and the tags and
// lengths of WatchEvent.object and RawExtension.raw.
func protobufFrameHead(t watch.EventType, objLen int) []byte {
	rawLen := protowire.SizeTag(rawExtensionRawField) + protowire.SizeBytes(objLen)
	msgLen := protowire.SizeTag(watchEventTypeField) + protowire.SizeBytes(len(t)) +
		protowire.SizeTag(watchEventObjectField) + protowire.SizeBytes(rawLen)
	head := make([]byte, frameLengthBytes, frameLengthBytes+msgLen-objLen)
	binary.BigEndian.PutUint32(head, uint32(msgLen))
	head = protowire.AppendTag(head, watchEventTypeField, protowire.BytesType)
	head = protowire.AppendString(head, string(t))
	head = protowire.AppendTag(head, watchEventObjectField, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(rawLen))
	head = protowire.AppendTag(head, rawExtensionRawField, protowire.BytesType)
	return protowire.AppendVarint(head, uint64(objLen))
}
