package cloudsync

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// RawClient lists cloud resources in JSON without decoding the objects,
// and watches them in protobuf where the cloud and this build allow
// (protocodec.go): LIST pages come back as *rawList and watch events carry
// *rawObject, which ToObject turns into the stored form with a single
// decode of each object.
type RawClient struct {
	rest   rest.Interface
	params runtime.ParameterCodec
	// ownRetries makes every request fail at its first refusal
	// (WithoutRetries). Immutable.
	ownRetries bool
	// proto says whether watches ask for protobuf (protocodec.go); shared
	// by the copies WithoutRetries makes.
	proto *protoWatches
}

// WithoutRetries returns a RawClient on the same connection whose
// requests are not retried by client-go: a 429 or a reset connection
// comes back at once, for a caller that paces its own retries with
// jitter. client-go retries a 429 after exactly its Retry-After, up to 10
// times, in step with every other client refused with it, so a fleet
// refused together comes back together, and each retry is another
// request.
func (c *RawClient) WithoutRetries() *RawClient {
	own := *c
	own.ownRetries = true
	return &own
}

// JSONWatches returns a RawClient on the same connection whose watches
// ask for JSON alone: for a source that keeps objects as JSON and encodes
// its protobuf from their Go types (a pool leader's door), where protobuf
// could only lose fields its JSON holds, and would cost both ends a
// conversion.
func (c *RawClient) JSONWatches() *RawClient {
	own := *c
	own.proto = &protoWatches{}
	own.proto.off.Store(true)
	return &own
}

// get starts a GET of path, without client-go's retries if ownRetries.
func (c *RawClient) get(path []string) *rest.Request {
	req := c.rest.Get().AbsPath(path...)
	if c.ownRetries {
		req = req.MaxRetries(0)
	}
	return req
}

// NewRawClient returns a RawClient for the cloud at cfg, at most
// maxOpening of whose requests (maxBackgroundOpening of them Background)
// await their response headers at once.
func NewRawClient(cfg *rest.Config) (*RawClient, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	proto := &protoWatches{}
	c.NegotiatedSerializer = newRawNegotiator(proto)
	c.GroupVersion = nil
	c.APIPath = "/"
	c.Wrap(newOpeningLimit(maxOpening, maxBackgroundOpening))
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("cloud client: %w", err)
	}
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return &RawClient{rest: rc, params: runtime.NewParameterCodec(scheme), proto: proto}, nil
}

// ListerWatcher lists and watches r, applying its namespace and selectors
// to every request.
func (c *RawClient) ListerWatcher(r Resource) cache.ListerWatcherWithContext {
	path := resourcePath(r)
	narrow := func(o metav1.ListOptions) *metav1.ListOptions {
		o.LabelSelector = r.LabelSelector
		o.FieldSelector = r.FieldSelector
		return &o
	}
	v1 := schema.GroupVersion{Version: "v1"}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			res := c.get(path).
				SpecificallyVersionedParams(narrow(o), c.params, v1).Do(ctx)
			if err := res.Error(); err != nil {
				return nil, err // the cloud's Status, decoded
			}
			body, _ := res.Raw() // no error: Error had none
			return decodeList(body)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			return c.get(path).SetHeader("Accept", c.proto.accept()).
				SpecificallyVersionedParams(narrow(o), c.params, v1).Watch(ctx)
		},
	}
}

// resourcePath is the URL path of r's collection.
func resourcePath(r Resource) []string {
	gvr := r.GVR
	p := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		p = []string{"/api", gvr.Version}
	}
	if r.Namespace != "" {
		p = append(p, "namespaces", r.Namespace)
	}
	return append(p, gvr.Resource)
}
