package kinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scan is what one walk of an object's JSON read: the header every object
// carries and the selectable fields of its kind. It decodes what kube's
// decoder would into
//
//	struct{ APIVersion, Kind string; Metadata *struct{ Namespace, Name,
//	ResourceVersion string; Labels map[string]string } }
//
// plus the kind's Reader fields, with the same results for every input.
type Scan struct {
	// APIVersion and Kind are the object's own, "" when absent.
	APIVersion, Kind string
	// Metadata reports whether metadata was an object; Namespace, Name,
	// ResourceVersion and Labels are its members.
	Metadata                         bool
	Namespace, Name, ResourceVersion string
	Labels                           map[string]string

	gk        schema.GroupKind // of the fields read
	vals      Values
	fieldErr  error // the first field of the wrong type the kind reads
	headerErr error // the first header value of the wrong type
}

// Err is the first header value of the wrong type, nil if none.
func (sc *Scan) Err() error { return sc.headerErr }

// span is one top-level member other than the header's, kept so that its
// fields can be read again if the kind turns out to differ.
type span struct {
	key        []byte
	start, end int
}

// spanCount is how many such members are kept without allocating: a pod
// has two (spec, status).
const spanCount = 8

// ScanObject reads raw, a JSON object, in one walk that also validates
// it. apiVersion and kind stand in for the object's own when it lacks them
// (items of a list). A syntax error or a header value of the wrong type is
// returned; a selectable field of the wrong type is returned by Fields.
func (t Table) ScanObject(raw []byte, apiVersion, kind string) (Scan, error) {
	sc, headerErr, err := t.scan(raw, apiVersion, kind, nil)
	if err == nil {
		err = headerErr
	}
	return sc, err
}

// scan is ScanObject returning a header value of the wrong type apart;
// forced, if not nil, is the kind the fields are read as.
func (t Table) scan(raw []byte, apiVersion, kind string, forced *schema.GroupKind) (sc Scan, headerErr, err error) {
	s := scanner{b: raw}
	if sc, err = t.scanValue(&s, apiVersion, kind, forced); err != nil {
		return sc, nil, err
	}
	if err := s.end(); err != nil {
		return sc, nil, err
	}
	return sc, sc.headerErr, nil
}

// scanValue is scan of the value at s.i, which it leaves after it; the
// Scan holds a header value of the wrong type.
func (t Table) scanValue(s *scanner, apiVersion, kind string, forced *schema.GroupKind) (Scan, error) {
	var sc Scan
	r := reader{scanner: *s, v: &sc.vals}
	defer func() { *s = r.scanner }()
	switch c := r.ws(); c {
	case 'n':
		return sc, r.lit("null")
	case '{':
	default:
		if err := r.skip(); err != nil {
			return sc, err
		}
		sc.headerErr = fmt.Errorf("cannot unmarshal %s into an object", jsonType(c))
		return sc, nil
	}
	w := walk{t: t, sc: &sc, r: &r, apiVersion: apiVersion, kind: kind, forced: forced}
	w.spans = w.buf[:0]
	if err := r.object(w.member); err != nil {
		return sc, err
	}
	w.finish()
	sc.headerErr = w.headerErr
	return sc, nil
}

// walk is the state of one ScanObject.
type walk struct {
	t                Table
	sc               *Scan
	r                *reader
	apiVersion, kind string // the list's
	forced           *schema.GroupKind
	headerErr        error

	used       bool             // a kind member was read
	consistent bool             // every kind member was read as usedGK
	usedGK     schema.GroupKind // the kind members were read as
	spans      []span
	buf        [spanCount]span
}

// groupKind is the object's group and kind as known so far.
func (w *walk) groupKind() schema.GroupKind {
	if w.forced != nil {
		return *w.forced
	}
	av, k := w.sc.APIVersion, w.sc.Kind
	if av == "" {
		av = w.apiVersion
	}
	if k == "" {
		k = w.kind
	}
	return GroupKind(av, k)
}

// member reads one top-level member: a header one, or one the kind's
// Reader names (as the kind known so far), or skips it; all but the
// header's are noted as spans.
func (w *walk) member(s *scanner, key []byte) error {
	switch {
	case keyIs(key, "apiVersion"):
		return w.headerString("apiVersion", &w.sc.APIVersion)
	case keyIs(key, "kind"):
		return w.headerString("kind", &w.sc.Kind)
	case keyIs(key, "metadata"):
		return w.metadata()
	}
	gk := w.groupKind()
	if !w.used {
		w.used, w.consistent, w.usedGK = true, true, gk
	} else if gk != w.usedGK {
		w.consistent = false
	}
	s.ws()
	sp := span{key: key, start: s.i}
	var err error
	if p := w.readerPath(key); p != nil {
		err = w.r.value(p, false)
	} else {
		err = s.skip()
	}
	sp.end = s.i
	w.spans = append(w.spans, sp)
	return err
}

// readerPath is the path the current kind reads for a top-level key.
func (w *walk) readerPath(key []byte) *path {
	if !w.consistent {
		return nil
	}
	rd := w.t[w.usedGK].Read
	if rd == nil {
		return nil
	}
	return member(rd.members, key)
}

// finish settles the kind and, if the members were read as another kind
// (its apiVersion or kind came after them), reads them again.
func (w *walk) finish() {
	sc := w.sc
	sc.gk = w.groupKind()
	if !w.used || (w.consistent && sc.gk == w.usedGK) {
		sc.fieldErr = w.r.err
		return
	}
	sc.vals = Values{}
	rd := w.t[sc.gk].Read
	r := reader{scanner: scanner{b: w.r.b, depth: 1}, v: &sc.vals}
	for _, sp := range w.spans {
		p := (*path)(nil)
		if rd != nil {
			p = member(rd.members, sp.key)
		}
		if p == nil {
			continue
		}
		r.i = sp.start
		_ = r.value(p, false) // validated by the first walk
	}
	sc.fieldErr = r.err
}

// mismatch records the first header value of the wrong type and skips it.
func (w *walk) mismatch(name, want string) error {
	if w.r.i < len(w.r.b) && w.headerErr == nil {
		w.headerErr = fmt.Errorf("cannot unmarshal %s into field %s of type %s", jsonType(w.r.b[w.r.i]), name, want)
	}
	return w.r.skip()
}

// headerString decodes a string member of the header into dst.
func (w *walk) headerString(name string, dst *string) error {
	switch w.r.ws() {
	case '"':
		s, err := w.r.readStr()
		*dst = s
		return err
	case 'n':
		return w.r.lit("null")
	}
	return w.mismatch(name, "string")
}

// metadata decodes metadata, a *struct: null resets it.
func (w *walk) metadata() error {
	sc := w.sc
	switch w.r.ws() {
	case 'n':
		sc.Metadata, sc.Namespace, sc.Name, sc.ResourceVersion, sc.Labels = false, "", "", "", nil
		return w.r.lit("null")
	case '{':
	default:
		return w.mismatch("metadata", "object")
	}
	sc.Metadata = true
	return w.r.object(func(s *scanner, key []byte) error {
		switch {
		case keyIs(key, "name"):
			return w.headerString("metadata.name", &sc.Name)
		case keyIs(key, "namespace"):
			return w.headerString("metadata.namespace", &sc.Namespace)
		case keyIs(key, "resourceVersion"):
			return w.headerString("metadata.resourceVersion", &sc.ResourceVersion)
		case keyIs(key, "labels"):
			return w.labels()
		}
		return s.skip()
	})
}

// labels decodes metadata.labels, a map[string]string: null resets it,
// an object adds to it.
func (w *walk) labels() error {
	sc := w.sc
	switch w.r.ws() {
	case 'n':
		sc.Labels = nil
		return w.r.lit("null")
	case '{':
	default:
		return w.mismatch("metadata.labels", "object")
	}
	if sc.Labels == nil {
		sc.Labels = make(map[string]string)
	}
	return w.r.object(func(s *scanner, key []byte) error {
		v := ""
		if err := w.headerString("metadata.labels", &v); err != nil {
			return err
		}
		sc.Labels[string(key)] = v
		return nil
	})
}

// Fields returns the fields a field selector matches the scanned object
// against, as SelectableFields does; raw is the object's JSON, read again
// only by a kind of the table without a Reader.
func (t Table) Fields(sc *Scan, raw []byte) (fields.Set, error) {
	k := t[sc.gk]
	fs := make(fields.Set, metaFieldCount+k.ExtraFields)
	fs[FieldName] = sc.Name
	fs[FieldNamespace] = sc.Namespace
	var err error
	switch {
	case k.Read != nil && sc.fieldErr != nil:
		err = sc.fieldErr
	case k.Read != nil:
		k.Read.fields(&sc.vals, sc.Name, fs)
	case k.Extract != nil:
		err = k.Extract(raw, fs)
	}
	if err != nil {
		return nil, fmt.Errorf("selectable fields of %s: %w", sc.gk.Kind, err)
	}
	return fs, nil
}

// GroupKindOf is the group and kind Fields reads the object as.
func (sc *Scan) GroupKindOf() schema.GroupKind { return sc.gk }
