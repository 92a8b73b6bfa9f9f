package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apiserver-lite/apiserver-lite/pkg/holding/forpods"
	"github.com/apiserver-lite/apiserver-lite/pkg/metastore"
)

// nodeNameKey is the meta key holding the node name the daemon last ran
// as; snapshots carry it, and restore refuses another node's.
const nodeNameKey = "daemon/node-name"

// maxTableError (runes) shortens an error in the table; -o json has it all.
const maxTableError = 60

// renderTable writes doc as aligned text: a header block, then one row per
// resource.
func renderTable(out io.Writer, doc statusDoc) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	row("SOURCE:", doc.Source)
	if doc.Node != "" {
		row("NODE:", doc.Node)
	}
	if doc.Link != "" {
		row("LINK:", doc.Link)
	}
	if doc.Source == sourceDataDir {
		row("SCHEMA:", strconv.Itoa(doc.SchemaVersion))
		row("INTEGRITY:", doc.Integrity)
	}
	if doc.LastCommitError != "" {
		row("LAST COMMIT ERROR:", doc.LastCommitError)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	live := doc.Source != sourceDataDir
	if live {
		row("RESOURCE", "RV", "READY", "OBJECTS", "WATCHERS", "TOO-SLOW", "STALENESS", "LAST ERROR")
	} else {
		row("RESOURCE", "RV", "OBJECTS", "KEY")
	}
	for _, r := range doc.Resources {
		rv, objs := strconv.FormatUint(r.ResourceVersion, 10), strconv.Itoa(r.Objects)
		if !live {
			row(r.Resource, rv, objs, r.Key)
			continue
		}
		row(r.Resource, rv, strconv.FormatBool(r.Ready), objs, strconv.Itoa(r.Watchers),
			strconv.FormatUint(r.TooSlowWatchers, 10), staleness(r.StalenessSeconds), lastError(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return renderHeldForPods(out, doc)
}

// renderHeldForPods lists the resources held for pods and for whom, after
// the resource table; nothing when there are none.
func renderHeldForPods(out io.Writer, doc statusDoc) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := false
	for _, r := range doc.Resources {
		if !r.ForPods {
			continue
		}
		if !header {
			fmt.Fprintln(out)
			fmt.Fprintln(tw, "HELD FOR PODS\tSERVICE ACCOUNTS")
			header = true
		}
		who := strings.Join(r.HeldFor, ",")
		if who == "" {
			who = "- (not held: read through the cloud)"
		}
		fmt.Fprintf(tw, "%s\t%s\n", r.Resource, who)
	}
	return tw.Flush()
}

func staleness(s *float64) string {
	if s == nil {
		return "-"
	}
	return (time.Duration(*s * float64(time.Second))).Round(time.Second).String()
}

func lastError(r resourceStatus) string {
	if r.LastError == nil {
		return "-"
	}
	msg := r.LastError.Code + ": " + r.LastError.Message
	if rs := []rune(msg); len(rs) > maxTableError {
		msg = string(rs[:maxTableError-3]) + "..."
	}
	return msg
}

// sourceDataDir is the Source of a statusDoc read from a data dir.
const sourceDataDir = "data-dir"

// inspectDataDir reads a stopped daemon's store read-only.
func inspectDataDir(ctx context.Context, path string) (statusDoc, error) {
	rep, err := metastore.Inspect(ctx, path, nodeNameKey)
	if err != nil {
		return statusDoc{}, err
	}
	doc := statusDoc{Source: sourceDataDir, Node: string(rep.Meta[nodeNameKey]), SchemaVersion: rep.SchemaVersion,
		Integrity: rep.Integrity, Resources: []resourceStatus{}}
	for _, r := range rep.Resources {
		doc.Resources = append(doc.Resources, resourceStatus{Resource: labelOfKey(r.Key), Key: r.Key,
			ResourceVersion: r.Watermark, Ready: r.Watermark > 0, Objects: r.Objects})
	}
	return doc, addStoredOwners(ctx, path, &doc)
}

// addStoredOwners names, for each resource held for pods in doc, the
// service accounts its stored owners run as.
func addStoredOwners(ctx context.Context, path string, doc *statusDoc) error {
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
			doc.Resources[i].HeldFor = forpods.StoredServiceAccounts(rep.Meta[forpods.OwnersKey(r.Key)])
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
