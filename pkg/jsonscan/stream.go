package jsonscan

import (
	"errors"
	"fmt"
)

// ErrIncomplete is returned by FrameScanner.Len when the object is cut
// short.
var ErrIncomplete = errors.New("incomplete JSON value")

// FrameScanner finds where the JSON objects of a stream end by matching
// brackets outside strings, without validating them (ScanObject
// validates the objects). It resumes where it stopped when the buffer it
// is given grows, so a frame arriving in pieces is scanned once.
type FrameScanner struct {
	i, depth   int  // where to resume, and the bracket depth there
	inStr, esc bool // inside a string, after its backslash
}

// Len returns the length of the leading whitespace and the JSON object b
// begins with, or ErrIncomplete if b ends before it does; b must extend
// the b of the previous call, unless that call returned a length.
func (f *FrameScanner) Len(b []byte) (int, error) {
	i := f.i
	for i < len(b) {
		c := b[i]
		i++
		switch {
		case f.esc:
			f.esc = false
		case f.inStr:
			if c == '\\' {
				f.esc = true
			} else if c == '"' {
				f.inStr = false
			} else {
				for i < len(b) && strPlain[b[i]] {
					i++
				}
			}
		case c == '"':
			f.inStr = true
		case c == '{' || (c == '[' && f.depth > 0):
			f.depth++
		case (c == '}' || c == ']') && f.depth > 0:
			if f.depth--; f.depth == 0 {
				*f = FrameScanner{}
				return i, nil
			}
		case f.depth > 0:
			for i < len(b) && !bracket[b[i]] {
				i++
			}
		case c != ' ' && c != '\t' && c != '\r' && c != '\n':
			*f = FrameScanner{}
			return 0, fmt.Errorf("invalid character %q looking for beginning of a watch event", c)
		}
	}
	f.i = i
	return 0, ErrIncomplete
}

// SplitWatchEvent splits a watch event, {"type":..,"object":..}, as kube
// decodes it into a metav1.WatchEvent, in one walk: the type, and the
// object's bytes (a slice of b), which are skimmed, not validated: they
// are read by ScanObject. An absent or null object is nil.
func SplitWatchEvent(b []byte) (typ string, object []byte, err error) {
	s := scanner{b: b}
	switch c := s.ws(); {
	case s.i >= len(b):
		return "", nil, s.syntaxErr("")
	case c == 'n':
		if err := s.lit("null"); err != nil {
			return "", nil, err
		}
		return "", nil, s.end()
	case c != '{':
		return "", nil, fmt.Errorf("cannot unmarshal %s into a watch event", jsonType(c))
	}
	err = s.object(func(s *scanner, key []byte) error {
		switch {
		case keyIs(key, "type"):
			return listString(s, "type", &typ)
		case keyIs(key, "object"):
			return eventObject(s, &object)
		}
		return s.skip()
	})
	if err != nil {
		return "", nil, err
	}
	return typ, object, s.end()
}

// validate checks that skimmed values are valid JSON.
func validate(items [][]byte) error {
	for _, it := range items {
		s := scanner{b: it}
		if err := s.skip(); err != nil {
			return err
		}
	}
	return nil
}

// eventObject reads a watch event's object member into object: skimmed,
// or left as it was by a null. An object it replaces is validated, as no
// one else will read it.
func eventObject(s *scanner, object *[]byte) error {
	if *object != nil {
		if err := validate([][]byte{*object}); err != nil {
			return err
		}
	}
	c := s.ws()
	start := s.i
	switch c {
	case '{', '[':
		err := s.skim()
		*object = s.b[start:s.i]
		return err
	case 'n':
		return s.lit("null")
	}
	err := s.skip()
	*object = s.b[start:s.i]
	return err
}

// bracket marks the bytes skim stops at outside strings.
var bracket [256]bool

func init() {
	for _, c := range []byte(`"{}[]`) {
		bracket[c] = true
	}
}

// skim skips the object or array at i by matching brackets outside
// strings, without validating: the caller validates the bytes skimmed
// (whose end is the value's end whenever they are valid JSON) later.
func (s *scanner) skim() error {
	b, i, depth := s.b, s.i, 0
	for i < len(b) {
		for i < len(b) && !bracket[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			i++
			for i < len(b) {
				for i+4 <= len(b) && strPlain[b[i]] && strPlain[b[i+1]] && strPlain[b[i+2]] && strPlain[b[i+3]] {
					i += 4
				}
				for i < len(b) && strPlain[b[i]] {
					i++
				}
				if i >= len(b) || b[i] == '"' {
					break
				}
				if b[i] == '\\' {
					i++ // the escaped byte, found invalid later if it is
				}
				i++ // or a control character, found invalid later
			}
		case '{', '[':
			depth++
		default:
			depth--
		}
		i++
		if depth == 0 {
			s.i = i
			return nil
		}
	}
	s.i = len(b)
	return s.syntaxErr("")
}
