package operations

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// maxTableError (runes) shortens an error in the table; -o json has it all.
const maxTableError = 60

// RenderTable writes doc as aligned text: a header block, then one row per
// resource.
func RenderTable(out io.Writer, doc Status) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	row("SOURCE:", doc.Source)
	if doc.Node != "" {
		row("NODE:", doc.Node)
	}
	if doc.Link != "" {
		row("LINK:", doc.Link)
	}
	if doc.Source == SourceDataDir {
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
	live := doc.Source != SourceDataDir
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
	if err := renderStored(out, doc); err != nil {
		return err
	}
	if err := renderHeldForPods(out, doc); err != nil {
		return err
	}
	if err := renderPool(out, doc); err != nil {
		return err
	}
	return renderNamespaced(out, doc)
}

// renderHeldForPods lists the resources held for pods and for whom, after
// the resource table; nothing when there are none.
func renderHeldForPods(out io.Writer, doc Status) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := false
	for _, r := range doc.Resources {
		if !r.ForPods {
			continue
		}
		if !header {
			fmt.Fprintln(out)
			fmt.Fprintln(tw, "HELD FOR PODS\tSCOPE\tSERVICE ACCOUNTS\tSYNC IDENTITY")
			header = true
		}
		who := strings.Join(r.HeldFor, ",")
		if who == "" {
			who = "- (not held: read through the cloud)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Resource, dash(r.Scope), who, dash(r.SyncIdentity))
	}
	return tw.Flush()
}

func staleness(s *float64) string {
	if s == nil {
		return "-"
	}
	return (time.Duration(*s * float64(time.Second))).Round(time.Second).String()
}

func lastError(r ResourceStatus) string {
	if r.LastError == nil {
		return "-"
	}
	msg := r.LastError.Code + ": " + r.LastError.Message
	if rs := []rune(msg); len(rs) > maxTableError {
		msg = string(rs[:maxTableError-3]) + "..."
	}
	return msg
}

// renderStored lists the answers kept for outages, by kind.
func renderStored(out io.Writer, doc Status) error {
	if len(doc.Stored) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STORED ANSWERS\tCOUNT\tBYTES")
	for _, s := range doc.Stored {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", s.Kind, s.Count, s.Bytes)
	}
	return tw.Flush()
}

// dash is s, or "-" when empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
