package kinds

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
)

// maxSlots bounds the values one kind's Reader reads (an Event reads 11).
const maxSlots = 12

// Values are the values a Reader read, by slot; "" for a value absent.
type Values [maxSlots]string

// valueType is the Go type kube decodes a field into, which decides what
// JSON it accepts and what null does (encoding/json semantics).
type valueType uint8

const (
	tObject    valueType = iota // a struct: null leaves it as it was
	tString                     // null leaves it as it was
	tBool                       // slot holds "true" or "false"; null leaves it
	tInt32                      // slot holds the decimal value; null leaves it
	tStringPtr                  // a *string: null makes it ""
	tFirst                      // a slice of structs: slot is "1" while it is non-empty; members read element 0
)

// path is one field a Reader reads, and the fields it reads inside.
type path struct {
	name    string
	typ     valueType
	slot    int
	members []path // of a tObject, or of each element of a tFirst
}

func obj(name string, members ...path) path { return path{name: name, members: members} }
func str(name string, slot int) path        { return path{name: name, typ: tString, slot: slot} }
func boolean(name string, slot int) path    { return path{name: name, typ: tBool, slot: slot} }
func int32Of(name string, slot int) path    { return path{name: name, typ: tInt32, slot: slot} }
func strPtr(name string, slot int) path     { return path{name: name, typ: tStringPtr, slot: slot} }
func first(name string, slot int, elem ...path) path {
	return path{name: name, typ: tFirst, slot: slot, members: elem}
}

// Reader reads a kind's selectable fields in the same walk as the object
// header: the top-level members it names are decoded as kube decodes them
// into the kind's Go type (case-sensitive keys; last duplicate wins,
// objects merge), and fields turns the values into the field set.
type Reader struct {
	members []path
	fields  func(v *Values, name string, fs fields.Set)
}

// member returns the path of members named by the raw key, nil if none.
func member(ps []path, key []byte) *path {
	for k := range ps {
		if keyIs(key, ps[k].name) {
			return &ps[k]
		}
	}
	return nil
}

// reader is a scanner that decodes into Values.
type reader struct {
	scanner
	v *Values
	// err is the first value of the wrong type; the walk goes on, as
	// encoding/json's does, so that a later syntax error still wins.
	err error
}

func (r *reader) mismatch(name, want string) error {
	if r.i < len(r.b) && r.err == nil {
		r.err = fmt.Errorf("cannot unmarshal %s into field %s of type %s", jsonType(r.b[r.i]), name, want)
	}
	return r.skip()
}

// jsonType names the JSON type of a value beginning with c.
func jsonType(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// value decodes the value at i into p's slots; discard reads without
// storing (elements after the first of a tFirst).
func (r *reader) value(p *path, discard bool) error {
	c := r.ws()
	if c == 'n' {
		if !discard {
			r.null(p)
		}
		return r.lit("null")
	}
	switch p.typ {
	case tObject:
		if c != '{' {
			return r.mismatch(p.name, "object")
		}
		return r.members(p.members, discard)
	case tFirst:
		if c != '[' {
			return r.mismatch(p.name, "array")
		}
		return r.first(p, discard)
	case tBool:
		word := "true"
		if c == 'f' {
			word = "false"
		} else if c != 't' {
			return r.mismatch(p.name, "bool")
		}
		return r.store(p, discard, word, r.lit(word))
	case tInt32:
		return r.int32(p, discard)
	}
	if c != '"' {
		return r.mismatch(p.name, "string")
	}
	s, err := r.readStr()
	return r.store(p, discard, s, err)
}

func (r *reader) store(p *path, discard bool, s string, err error) error {
	if err == nil && !discard {
		r.v[p.slot] = s
	}
	return err
}

// null applies JSON null to p: only pointers and slices change.
func (r *reader) null(p *path) {
	switch p.typ {
	case tStringPtr:
		r.v[p.slot] = ""
	case tFirst:
		r.v[p.slot] = ""
		clearSlots(r.v, p.members)
	}
}

func clearSlots(v *Values, ps []path) {
	for k := range ps {
		if ps[k].typ == tObject {
			clearSlots(v, ps[k].members)
		} else {
			v[ps[k].slot] = ""
		}
	}
}

// members decodes the object at i, reading the members ps names.
func (r *reader) members(ps []path, discard bool) error {
	return r.object(func(s *scanner, key []byte) error {
		if p := member(ps, key); p != nil {
			return r.value(p, discard)
		}
		return s.skip()
	})
}

// first decodes an array of objects whose first element's members are
// read. Like encoding/json, a non-empty array decodes its first element
// into the one already there, an empty one leaves none.
func (r *reader) first(p *path, discard bool) error {
	had := r.v[p.slot] != ""
	if !discard {
		r.v[p.slot] = ""
		if !had {
			clearSlots(r.v, p.members)
		}
	}
	elem := path{name: p.name, members: p.members}
	return r.array(func(s *scanner, n int) error {
		if n == 0 && !discard {
			r.v[p.slot] = "1"
		}
		return r.value(&elem, discard || n > 0)
	})
}

// int32 decodes an integer that fits an int32.
func (r *reader) int32(p *path, discard bool) error {
	c := r.ws()
	if c != '-' && (c < '0' || c > '9') {
		return r.mismatch(p.name, "int32")
	}
	num, err := r.number()
	if err != nil {
		return err
	}
	n, perr := strconv.ParseInt(string(num), 10, 32)
	if perr != nil {
		if r.err == nil {
			r.err = fmt.Errorf("cannot unmarshal number %s into field %s of type int32", num, p.name)
		}
		return nil
	}
	return r.store(p, discard, strconv.FormatInt(n, 10), nil)
}
