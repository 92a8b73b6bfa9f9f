package encode

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/printers"
	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/response"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// Table converts a resource's objects to meta.k8s.io Tables, as kubectl
// get asks with Accept: application/json;as=Table;v=v1;g=meta.k8s.io.
type Table struct {
	apiVersion string // meta.k8s.io/v1 or meta.k8s.io/v1beta1
	opts       metav1.TableOptions
	printer    printers.Printer
	err        error // invalid Table options, answered after the read
}

// NewTable returns the negotiated Table conversion of gr's objects.
func NewTable(tbl *response.Table, gr schema.GroupResource) *Table {
	return &Table{apiVersion: tbl.APIVersion, opts: tbl.Options, err: tbl.Err, printer: printers.For(gr)}
}

// Err is kube's 400 for invalid Table options, nil when they are valid.
func (tr *Table) Err() error { return tr.err }

// Convert converts objs to a Table at resourceVersion rv, with the column
// definitions unless headers is false.
func (tr *Table) Convert(objs []*versioncache.Object, rv uint64, now time.Time, headers bool) (*metav1.Table, error) {
	tbl := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: tr.apiVersion},
		ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(rv, 10)},
	}
	if headers && !tr.opts.NoHeaders {
		tbl.ColumnDefinitions = tr.printer.Columns
	}
	if tr.printer.EmptyRows {
		tbl.Rows = []metav1.TableRow{}
	}
	for _, o := range objs {
		row, err := tr.row(o.Raw, now, false)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return tbl, nil
}

// row converts one object, embedding it as includeObject asks: its
// PartialObjectMetadata by default, the whole object, or nothing. Like
// kube's asTable, a row of the initial-events-end bookmark (keepMeta)
// always carries at least the metadata, so the annotation reaches the
// client.
func (tr *Table) row(raw []byte, now time.Time, keepMeta bool) (metav1.TableRow, error) {
	cells, conditions, err := tr.printer.Row(raw, now)
	if err != nil {
		return metav1.TableRow{}, err
	}
	row := metav1.TableRow{Cells: cells, Conditions: conditions}
	switch tr.opts.IncludeObject {
	case metav1.IncludeObject:
		row.Object = runtime.RawExtension{Raw: raw}
	case metav1.IncludeNone:
		if !keepMeta {
			break
		}
		fallthrough
	default:
		m, err := printers.ObjectMeta(raw)
		if err != nil {
			return metav1.TableRow{}, err
		}
		partial := metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: tr.apiVersion},
			ObjectMeta: m,
		}
		if row.Object.Raw, err = json.Marshal(&partial); err != nil {
			return metav1.TableRow{}, err
		}
	}
	return row, nil
}

// TableFrames encodes one watcher's events as one-row Tables. Like
// kube-apiserver's watch encoder, only the first frame carries the column
// definitions, and bookmarks are Tables too. Used by the serving goroutine
// only.
type TableFrames struct {
	req   *Table
	clock func() time.Time
	sent  bool // a Table with headers was written
}

// NewTableFrames returns the frame encoder of one watch converted by tr;
// clock is the server time ages are measured against.
func NewTableFrames(tr *Table, clock func() time.Time) *TableFrames {
	return &TableFrames{req: tr, clock: clock}
}

// Write writes a watch frame of type typ whose object, raw at rv, is
// converted to a one-row Table; keepMeta as for Table.row.
func (tf *TableFrames) Write(out io.Writer, typ watch.EventType, raw []byte, rv uint64, keepMeta bool) error {
	tbl := &metav1.Table{
		TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: tf.req.apiVersion},
		ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(rv, 10)},
	}
	if !tf.sent && !tf.req.opts.NoHeaders {
		tbl.ColumnDefinitions = tf.req.printer.Columns
	}
	row, err := tf.req.row(raw, tf.clock(), keepMeta)
	if err != nil {
		return err
	}
	tbl.Rows = []metav1.TableRow{row}
	tf.sent = true
	obj, err := json.Marshal(tbl)
	if err != nil {
		return err
	}
	b, err := json.Marshal(metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: obj}})
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
