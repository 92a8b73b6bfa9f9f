package jsonscan

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MaxSlots bounds the values one kind's Paths read (an Event reads 11).
const MaxSlots = 12

// Values are the values Paths read, by slot; "" for a value absent.
type Values [MaxSlots]string

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

// Path is one field a kind's walk reads into a slot of Values, and the
// fields it reads inside.
type Path struct {
	name    string
	typ     valueType
	slot    int
	members []Path // of a tObject, or of each element of a tFirst
}

// Obj is a struct member name whose members are read.
func Obj(name string, members ...Path) Path { return Path{name: name, members: members} }

// Str is a string member name read into slot.
func Str(name string, slot int) Path { return Path{name: name, typ: tString, slot: slot} }

// Bool is a bool member name read into slot as "true" or "false".
func Bool(name string, slot int) Path { return Path{name: name, typ: tBool, slot: slot} }

// Int32 is an int32 member name read into slot as its decimal text.
func Int32(name string, slot int) Path { return Path{name: name, typ: tInt32, slot: slot} }

// StrPtr is a *string member name read into slot; null makes it "".
func StrPtr(name string, slot int) Path { return Path{name: name, typ: tStringPtr, slot: slot} }

// First is a slice of structs name: slot is "1" while it is non-empty,
// and elem are read from its first element.
func First(name string, slot int, elem ...Path) Path {
	return Path{name: name, typ: tFirst, slot: slot, members: elem}
}

// Paths are the top-level members a kind's walk reads besides the header,
// decoded as kube decodes them into the kind's Go type (case-sensitive
// keys; the last duplicate wins, objects merge).
type Paths []Path

// Kinds gives the Paths read for objects of a kind; nil Paths read none.
type Kinds interface {
	Paths(gk schema.GroupKind) Paths
}

// member returns the path of members named by the raw key, nil if none.
func member(ps []Path, key []byte) *Path {
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
func (r *reader) value(p *Path, discard bool) error {
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

func (r *reader) store(p *Path, discard bool, s string, err error) error {
	if err == nil && !discard {
		r.v[p.slot] = s
	}
	return err
}

// null applies JSON null to p: only pointers and slices change.
func (r *reader) null(p *Path) {
	switch p.typ {
	case tStringPtr:
		r.v[p.slot] = ""
	case tFirst:
		r.v[p.slot] = ""
		clearSlots(r.v, p.members)
	}
}

func clearSlots(v *Values, ps []Path) {
	for k := range ps {
		if ps[k].typ == tObject {
			clearSlots(v, ps[k].members)
		} else {
			v[ps[k].slot] = ""
		}
	}
}

// members decodes the object at i, reading the members ps names.
func (r *reader) members(ps []Path, discard bool) error {
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
func (r *reader) first(p *Path, discard bool) error {
	had := r.v[p.slot] != ""
	if !discard {
		r.v[p.slot] = ""
		if !had {
			clearSlots(r.v, p.members)
		}
	}
	elem := Path{name: p.name, members: p.members}
	return r.array(func(s *scanner, n int) error {
		if n == 0 && !discard {
			r.v[p.slot] = "1"
		}
		return r.value(&elem, discard || n > 0)
	})
}

// int32 decodes an integer that fits an int32.
func (r *reader) int32(p *Path, discard bool) error {
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
