package cloudsync

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apiserver-lite/apiserver-lite/pkg/cloudsync/relist"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/metadata"
)

// NewLeanSource returns the relist.Source of r: metadata lists through mc,
// which asks for protobuf PartialObjectMetadataList (JSON where the cloud
// lacks it), and single objects through raw, so their stored bytes are
// those a full list through raw stores.
func NewLeanSource(raw *RawClient, mc metadata.Interface, r Resource) relist.Source {
	return &leanClient{raw: raw, meta: mc, res: r}
}

// leanClient is NewLeanSource's relist.Source. Immutable.
type leanClient struct {
	raw  *RawClient
	meta metadata.Interface
	res  Resource
}

func (c *leanClient) ListMeta(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	opts.LabelSelector, opts.FieldSelector = c.res.LabelSelector, c.res.FieldSelector
	return c.meta.Resource(c.res.GVR).Namespace(c.res.Namespace).List(ctx, opts)
}

// GetAt reads the object with a LIST of its own namespace selecting its
// name at exactly rv: unlike a GET, whose answer may be newer than rv, it
// returns the state a full list at rv holds, and the cloud serves it with a
// single-key read. The item comes in the full list's encoding, so it is
// stored byte for byte as a full list stores it.
func (c *leanClient) GetAt(ctx context.Context, namespace, name string, rv uint64) (*versioncache.Object, error) {
	sel := fields.OneTermEqualSelector("metadata.name", name)
	if c.res.FieldSelector != "" {
		own, err := fields.ParseSelector(c.res.FieldSelector)
		if err != nil {
			return nil, fmt.Errorf("field selector: %w", err)
		}
		sel = fields.AndSelectors(own, sel)
	}
	one := Resource{GVR: c.res.GVR, Namespace: namespace, LabelSelector: c.res.LabelSelector, FieldSelector: sel.String()}
	page, err := c.raw.ListerWatcher(one).ListWithContext(ctx, metav1.ListOptions{
		ResourceVersion: strconv.FormatUint(rv, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if err != nil {
		return nil, err
	}
	objs, err := appendItems(nil, page)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.Namespace == namespace && o.Name == name {
			return o, nil
		}
	}
	return nil, nil
}

// ListAt lists the resource's objects of one namespace, narrowed by its
// selectors, at exactly rv (relist.NamespaceLister), in the full list's
// encoding. Reading a namespace's objects a lean relist would read one by
// one, it is bounded by relist's fold ratio.
func (c *leanClient) ListAt(ctx context.Context, namespace string, rv uint64) ([]*versioncache.Object, error) {
	if c.res.Namespace != "" && c.res.Namespace != namespace {
		return nil, nil
	}
	ns := Resource{GVR: c.res.GVR, Namespace: namespace, LabelSelector: c.res.LabelSelector, FieldSelector: c.res.FieldSelector}
	page, err := c.raw.ListerWatcher(ns).ListWithContext(ctx, metav1.ListOptions{
		ResourceVersion: strconv.FormatUint(rv, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if err != nil {
		return nil, err
	}
	return appendItems(nil, page)
}

// parseRV parses a resourceVersion the cloud sent; what names it.
func parseRV(s, what string) (uint64, error) {
	rv, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("resource version %q of %s: %w", s, what, err)
	}
	return rv, nil
}
