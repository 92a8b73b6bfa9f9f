package jsonscan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scan is what one walk of an object's JSON read: the header every object
// carries and the fields its kind's Paths name. It decodes what kube's
// decoder would into
//
//	struct{ APIVersion, Kind string; Metadata *struct{ Namespace, Name,
//	ResourceVersion, UID string; Labels map[string]string } }
//
// plus the kind's Paths, with the same results for every input.
type Scan struct {
	// APIVersion and Kind are the object's own, "" when absent.
	APIVersion, Kind string
	// Metadata reports whether metadata was an object; Namespace, Name,
	// ResourceVersion, UID and Labels are its members.
	Metadata                              bool
	Namespace, Name, ResourceVersion, UID string
	Labels                                map[string]string

	gk        schema.GroupKind // of the fields read
	vals      Values
	fieldErr  error // the first field of the wrong type the kind reads
	headerErr error // the first header value of the wrong type
}

// Err is the first header value of the wrong type, nil if none.
func (sc *Scan) Err() error { return sc.headerErr }

// FieldErr is the first value of the wrong type among the fields the
// kind's Paths read, nil if none.
func (sc *Scan) FieldErr() error { return sc.fieldErr }

// Values are the fields the kind's Paths read, by slot.
func (sc *Scan) Values() *Values { return &sc.vals }

// GroupKindOf is the group and kind the fields were read as.
func (sc *Scan) GroupKindOf() schema.GroupKind { return sc.gk }

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
// it, reading the fields kinds names for its kind (none when kinds is
// nil). apiVersion and kind stand in for the object's own when it lacks
// them (items of a list). A syntax error or a header value of the wrong
// type is returned; a field of the wrong type is the Scan's FieldErr.
func ScanObject(raw []byte, apiVersion, kind string, kinds Kinds) (Scan, error) {
	sc, headerErr, err := scan(raw, target{apiVersion: apiVersion, kind: kind, kinds: kinds})
	if err == nil {
		err = headerErr
	}
	return sc, err
}

// ScanAs reads raw as ScanObject does, reading paths whatever its kind
// says, as objects of gk. Only a syntax error is returned.
func ScanAs(raw []byte, gk schema.GroupKind, paths Paths) (Scan, error) {
	sc, _, err := scan(raw, target{forced: &gk, kinds: fixed{paths}})
	return sc, err
}

// UID is metadata.uid of raw, a JSON object, read by ScanObject; "" when
// it has none or raw does not scan.
func UID(raw []byte) string {
	sc, err := ScanObject(raw, "", "", nil)
	if err != nil {
		return ""
	}
	return sc.UID
}

// target is what a walk reads an object as.
type target struct {
	apiVersion, kind string // the list's, standing in for the object's own
	kinds            Kinds  // nil reads no fields
	// forced, if not nil, is the kind the fields are read as.
	forced *schema.GroupKind
}

// fixed reads the same paths for every kind.
type fixed struct{ paths Paths }

func (f fixed) Paths(schema.GroupKind) Paths { return f.paths }

// paths is what the walk reads for objects of gk.
func (tg *target) paths(gk schema.GroupKind) Paths {
	if tg.kinds == nil {
		return nil
	}
	return tg.kinds.Paths(gk)
}

// scan is ScanObject returning a header value of the wrong type apart.
func scan(raw []byte, tg target) (sc Scan, headerErr, err error) {
	s := scanner{b: raw}
	if sc, err = scanValue(&s, tg); err != nil {
		return sc, nil, err
	}
	if err := s.end(); err != nil {
		return sc, nil, err
	}
	return sc, sc.headerErr, nil
}

// scanValue is scan of the value at s.i, which it leaves after it; the
// Scan holds a header value of the wrong type.
func scanValue(s *scanner, tg target) (Scan, error) {
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
	w := walk{tg: tg, sc: &sc, r: &r}
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
	tg        target
	sc        *Scan
	r         *reader
	headerErr error

	used       bool             // a kind member was read
	consistent bool             // every kind member was read as usedGK
	usedGK     schema.GroupKind // the kind members were read as
	spans      []span
	buf        [spanCount]span
}

// groupKind is the object's group and kind as known so far.
func (w *walk) groupKind() schema.GroupKind {
	if w.tg.forced != nil {
		return *w.tg.forced
	}
	av, k := w.sc.APIVersion, w.sc.Kind
	if av == "" {
		av = w.tg.apiVersion
	}
	if k == "" {
		k = w.tg.kind
	}
	return GroupKind(av, k)
}

// member reads one top-level member: a header one, or one the kind's
// Paths name (as the kind known so far), or skips it; all but the
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
func (w *walk) readerPath(key []byte) *Path {
	if !w.consistent {
		return nil
	}
	return member(w.tg.paths(w.usedGK), key)
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
	paths := w.tg.paths(sc.gk)
	r := reader{scanner: scanner{b: w.r.b, depth: 1}, v: &sc.vals}
	for _, sp := range w.spans {
		p := member(paths, sp.key)
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
		sc.Metadata, sc.Namespace, sc.Name, sc.ResourceVersion, sc.UID, sc.Labels = false, "", "", "", "", nil
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
		case keyIs(key, "uid"):
			return w.headerString("metadata.uid", &sc.UID)
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

// GroupKind returns the group and kind of an object's apiVersion and kind.
func GroupKind(apiVersion, kind string) schema.GroupKind {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		// An apiVersion with several slashes names no group.
		return schema.GroupKind{Group: apiVersion, Kind: kind}
	}
	return schema.GroupKind{Group: gv.Group, Kind: kind}
}
