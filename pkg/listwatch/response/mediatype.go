package response

// Media types of the answers, as kube-apiserver names them.
const (
	MediaTypeJSON     = "application/json"
	MediaTypeYAML     = "application/yaml"
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"
	// StreamWatch is the media type parameter of a watch stream.
	StreamWatch = "watch"
	// MediaTypeProtobufWatch frames a protobuf watch stream: a 4-byte
	// big-endian length before each WatchEvent.
	MediaTypeProtobufWatch = MediaTypeProtobuf + ";stream=" + StreamWatch
	// ContentTypeText is the Content-Type of the health endpoints.
	ContentTypeText = "text/plain; charset=utf-8"
)

// Aggregated discovery: kube-apiserver 1.36 serves only v2
// (AggregatedDiscoveryRemoveBetaType is locked on).
const (
	AggregatedGroup   = "apidiscovery.k8s.io"
	AggregatedVersion = "v2"
	AggregatedKind    = "APIGroupDiscoveryList"
	// ContentTypeAggregated carries the parameters in the order
	// kube-apiserver writes them.
	ContentTypeAggregated = MediaTypeJSON + ";g=" + AggregatedGroup + ";v=" + AggregatedVersion + ";as=" + AggregatedKind
)

// SupportedMediaTypes are the media types kube-apiserver lists in its 406
// for a get or list: its serializers for built-in kinds and custom
// resources alike (CBOR is off by default in v1.36).
var SupportedMediaTypes = []string{MediaTypeJSON, MediaTypeYAML, MediaTypeProtobuf}

// SupportedStreamMediaTypes are those it lists in its 406 for a watch:
// the serializers with a stream framing.
var SupportedStreamMediaTypes = []string{MediaTypeJSON + ";stream=" + StreamWatch, MediaTypeProtobufWatch}
