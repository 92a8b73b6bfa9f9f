package listwatch

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1beta1/validation"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiserver-lite/apiserver-lite/pkg/listwatch/printers"
	"github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

// tableRequest is a request to answer with a meta.k8s.io Table, as kubectl
// get asks with Accept: application/json;as=Table;v=v1;g=meta.k8s.io.
type tableRequest struct {
	apiVersion string // meta.k8s.io/v1 or meta.k8s.io/v1beta1
	opts       metav1.TableOptions
	printer    printers.Printer
}

// parseTable returns the Table request r makes for t, or nil when r does
// not ask for a Table. Its includeObject is validated as kube-apiserver
// does.
func parseTable(r *http.Request, t target) (*tableRequest, error) {
	if t.proto != nil {
		return nil, nil // protobuf won the negotiation
	}
	ch := chooseMedia(r, resourceEndpoint)
	if ch.convert != convertTable {
		return nil, nil
	}
	tr := &tableRequest{apiVersion: metav1.GroupName + "/" + ch.version}
	if err := decodeTableOptions(r.URL.Query(), &tr.opts); err != nil {
		return nil, err
	}
	tr.printer = printers.For(t.groupResource())
	return tr, nil
}

// decodeTableOptions decodes and validates includeObject.
func decodeTableOptions(q url.Values, opts *metav1.TableOptions) error {
	codec := metainternalversionscheme.ParameterCodec
	if err := codec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	switch errs := validation.ValidateTableOptions(opts); len(errs) {
	case 0:
		return nil
	case 1:
		return apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
	}
}

// table converts objs to a Table at resourceVersion rv, with the column
// definitions unless headers is false.
func (tr *tableRequest) table(objs []*versioncache.Object, rv uint64, now time.Time, headers bool) (*metav1.Table, error) {
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
		row, err := tr.row(o.Raw, now)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		tbl.Rows = append(tbl.Rows, row)
	}
	return tbl, nil
}

// row converts one object, embedding it as includeObject asks: its
// PartialObjectMetadata by default, the whole object, or nothing.
func (tr *tableRequest) row(raw []byte, now time.Time) (metav1.TableRow, error) {
	cells, conditions, err := tr.printer.Row(raw, now)
	if err != nil {
		return metav1.TableRow{}, err
	}
	row := metav1.TableRow{Cells: cells, Conditions: conditions}
	switch tr.opts.IncludeObject {
	case metav1.IncludeObject:
		row.Object = runtime.RawExtension{Raw: raw}
	case metav1.IncludeNone:
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

// writeTable writes a Table of objs as JSON.
func (s *server) writeTable(w http.ResponseWriter, tr *tableRequest, objs []*versioncache.Object, rv uint64) {
	tbl, err := tr.table(objs, rv, s.clock.Now(), true)
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := json.Marshal(tbl)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, b, []byte{'\n'})
}

// tableFrames encodes one watcher's events as one-row Tables. Like
// kube-apiserver's watch encoder, only the first event carries the column
// definitions. Used by the serving goroutine only.
type tableFrames struct {
	req   *tableRequest
	clock func() time.Time
	sent  bool // a Table with headers was written
}

// write writes the watch frame of ev with its object as a one-row Table.
func (tf *tableFrames) write(out io.Writer, ev versioncache.Event) error {
	tbl, err := tf.req.table([]*versioncache.Object{ev.Object}, ev.Object.RV, tf.clock(), !tf.sent)
	if err != nil {
		return err
	}
	tf.sent = true
	obj, err := json.Marshal(tbl)
	if err != nil {
		return err
	}
	b, err := json.Marshal(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: obj}})
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
