package operations

import (
	"context"
	"net/url"
	"strings"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
	"github.com/apiserver-lite/apiserver-lite/pkg/offline"
)

// SourceDataDir is the Source of a Status read from a data dir.
const SourceDataDir = "data-dir"

// InspectDataDir reads a stopped daemon's store read-only.
func InspectDataDir(ctx context.Context, path string) (Status, error) {
	rep, err := metastore.Inspect(ctx, path, metastore.NodeNameKey)
	if err != nil {
		return Status{}, err
	}
	doc := Status{Source: SourceDataDir, Node: string(rep.Meta[metastore.NodeNameKey]), SchemaVersion: rep.SchemaVersion,
		Integrity: rep.Integrity, Resources: []ResourceStatus{}}
	for _, r := range rep.Resources {
		doc.Resources = append(doc.Resources, ResourceStatus{Resource: labelOfKey(r.Key), Key: r.Key,
			ResourceVersion: r.Watermark, Ready: r.Watermark > 0, Objects: r.Objects})
	}
	if err := addStoredAnswers(ctx, path, &doc); err != nil {
		return Status{}, err
	}
	if err := addStoredOwners(ctx, path, &doc); err != nil {
		return Status{}, err
	}
	return doc, addStoredNamespaced(ctx, path, &doc)
}

// addStoredAnswers counts, for each kind of stored answer, its rows and
// bytes.
func addStoredAnswers(ctx context.Context, path string, doc *Status) error {
	use, err := metastore.InspectMetaUsage(ctx, path, offline.Prefixes()...)
	if err != nil {
		return err
	}
	for i, k := range offline.Kinds {
		doc.Stored = append(doc.Stored, StoredAnswers{Kind: k.Name, Prefix: k.Prefix, Count: use[i].Count, Bytes: use[i].Bytes})
	}
	return nil
}

// addStoredOwners names, for each resource held for pods in doc, the
// service accounts its stored owners run as.
func addStoredOwners(ctx context.Context, path string, doc *Status) error {
	var keys []string
	for i, r := range doc.Resources {
		if q, err := url.ParseQuery(strings.SplitN(r.Key+"?", "?", 3)[1]); err == nil && q.Get("forPods") == "true" {
			doc.Resources[i].ForPods = true
			keys = append(keys, forpods.OwnersKey(r.Key))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	rep, err := metastore.Inspect(ctx, path, keys...)
	if err != nil {
		return err
	}
	for i, r := range doc.Resources {
		if r.ForPods {
			stored := rep.Meta[forpods.OwnersKey(r.Key)]
			doc.Resources[i].HeldFor = forpods.StoredServiceAccounts(stored)
			doc.Resources[i].Owners = forpods.StoredPods(stored)
			doc.Resources[i].Scope = forpods.ScopeCluster
		}
	}
	return nil
}

// labelOfKey turns a storage key ("group/version/resource?selectors") into
// the resource's label ("resource.group"); see cloudsync.Resource.Key.
func labelOfKey(key string) string {
	path, _, _ := strings.Cut(key, "?")
	parts := strings.Split(path, "/")
	if len(parts) != 3 {
		return key
	}
	if parts[0] == "" {
		return parts[2]
	}
	return parts[2] + "." + parts[0]
}
