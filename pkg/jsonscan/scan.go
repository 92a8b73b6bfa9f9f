package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
)

// maxDepth is the deepest nesting of arrays and objects accepted, as
// encoding/json's scanner (and so kube's decoder) accepts: 10,000 levels.
const maxDepth = 10000

// errDepth is the error for a value nested deeper than maxDepth.
var errDepth = errors.New("exceeded max depth")

// strPlain marks the bytes a string can hold without a closer look: not a
// quote, a backslash or a control character. strASCII also excludes
// non-ASCII bytes, whose decoding must replace invalid UTF-8.
var strPlain, strASCII [256]bool

func init() {
	for c := 0x20; c < 256; c++ {
		strPlain[c] = c != '"' && c != '\\'
		strASCII[c] = strPlain[c] && c < 0x80
	}
}

// scanner walks one JSON text, validating it as encoding/json does, so
// that no byte is looked at twice. Its methods leave i after what they
// read; a syntax error is returned and ends the walk.
type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) syntaxErr(what string) error {
	if s.i >= len(s.b) {
		return errors.New("unexpected end of JSON input")
	}
	return fmt.Errorf("invalid character %q %s at offset %d", s.b[s.i], what, s.i)
}

// ws skips whitespace and returns the next byte, 0 at the end (a 0
// byte, never valid there, is told apart by i < len(b)).
func (s *scanner) ws() byte {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return c
		}
	}
	return 0
}

// end checks that only whitespace follows the top-level value.
func (s *scanner) end() error {
	if s.ws(); s.i < len(s.b) {
		return s.syntaxErr("after top-level value")
	}
	return nil
}

// skip validates and skips one value.
func (s *scanner) skip() error {
	switch c := s.ws(); c {
	case '{':
		return s.skipObject()
	case '[':
		return s.skipArray()
	case '"':
		_, _, err := s.str()
		return err
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			_, err := s.number()
			return err
		}
		return s.syntaxErr("looking for beginning of value")
	}
}

// skipObject is object with every member skipped, without a call per
// member: most of an object's bytes go through here.
func (s *scanner) skipObject() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // '{'
	if s.ws() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if s.ws() != '"' {
			return s.syntaxErr("looking for beginning of object key string")
		}
		if _, _, err := s.str(); err != nil {
			return err
		}
		if s.ws() != ':' {
			return s.syntaxErr("after object key")
		}
		s.i++
		if err := s.skip(); err != nil {
			return err
		}
		switch s.ws() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.syntaxErr("after object key:value pair")
		}
	}
}

// skipArray is array with every element skipped.
func (s *scanner) skipArray() error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // '['
	if s.ws() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if err := s.skip(); err != nil {
			return err
		}
		switch s.ws() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.syntaxErr("after array element")
		}
	}
}

// enter counts one more level of nesting.
func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return errDepth
	}
	return nil
}

// object walks the object at i, calling member with each key, decoded,
// positioned at the member's value; member must consume the value.
func (s *scanner) object(member func(s *scanner, key []byte) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // '{'
	if s.ws() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if s.ws() != '"' {
			return s.syntaxErr("looking for beginning of object key string")
		}
		start, plain, err := s.str()
		if err != nil {
			return err
		}
		key := s.b[start : s.i-1]
		if !plain {
			key = []byte(keyString(key))
		}
		if s.ws() != ':' {
			return s.syntaxErr("after object key")
		}
		s.i++
		if err := member(s, key); err != nil {
			return err
		}
		switch s.ws() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.syntaxErr("after object key:value pair")
		}
	}
}

// array walks the array at i, calling elem at each element with its
// index; elem must consume the element.
func (s *scanner) array(elem func(s *scanner, n int) error) error {
	if err := s.enter(); err != nil {
		return err
	}
	s.i++ // '['
	if s.ws() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for n := 0; ; n++ {
		if err := elem(s, n); err != nil {
			return err
		}
		switch s.ws() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.syntaxErr("after array element")
		}
	}
}

// str validates and skips the string at i, returning where its content
// starts and whether it is plain: ASCII without escapes, so its bytes are
// its value.
func (s *scanner) str() (start int, plain bool, err error) {
	s.i++ // '"'
	start, plain = s.i, true
	b := s.b
	for {
		i := s.i
		for i+4 <= len(b) && strASCII[b[i]] && strASCII[b[i+1]] && strASCII[b[i+2]] && strASCII[b[i+3]] {
			i += 4 // unrolled: most bytes of an object are in strings
		}
		for i < len(b) && strASCII[b[i]] {
			i++
		}
		s.i = i
		if i >= len(b) {
			return 0, false, s.syntaxErr("in string literal")
		}
		switch c := b[i]; {
		case c == '"':
			s.i++
			return start, plain, nil
		case c == '\\':
			plain = false
			if err := s.escape(); err != nil {
				return 0, false, err
			}
		case c < 0x20:
			return 0, false, s.syntaxErr("in string literal")
		default: // non-ASCII
			plain = false
			for s.i < len(b) && strPlain[b[s.i]] {
				s.i++
			}
		}
	}
}

// escape validates the escape sequence at i.
func (s *scanner) escape() error {
	s.i++ // '\\'
	if s.i >= len(s.b) {
		return s.syntaxErr("in string escape code")
	}
	switch s.b[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i++
		return nil
	case 'u':
		s.i++
		for range 4 {
			if s.i >= len(s.b) || !isHex(s.b[s.i]) {
				return s.syntaxErr("in \\u hexadecimal character escape")
			}
			s.i++
		}
		return nil
	}
	return s.syntaxErr("in string escape code")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// readStr reads the string at i and returns its value, decoded as
// encoding/json does (escapes resolved, invalid UTF-8 replaced).
func (s *scanner) readStr() (string, error) {
	start, plain, err := s.str()
	if err != nil {
		return "", err
	}
	if plain {
		return string(s.b[start : s.i-1]), nil
	}
	var v string
	if err := json.Unmarshal(s.b[start-1:s.i], &v); err != nil {
		return "", err // cannot happen: the literal was validated
	}
	return v, nil
}

// keyString returns the value of a key's raw bytes, decoded as
// encoding/json does.
func keyString(raw []byte) string {
	for _, c := range raw {
		if !strASCII[c] {
			var v string
			q := make([]byte, 0, len(raw)+2)
			q = append(append(append(q, '"'), raw...), '"')
			if json.Unmarshal(q, &v) != nil {
				return "" // cannot happen: the key was validated
			}
			return v
		}
	}
	return string(raw)
}

// keyIs reports whether a decoded key is name.
func keyIs(key []byte, name string) bool { return string(key) == name }

// lit validates the literal word at i.
func (s *scanner) lit(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		for k := 0; k < len(word) && s.i < len(s.b) && s.b[s.i] == word[k]; k++ {
			s.i++
		}
		return s.syntaxErr("in literal " + word)
	}
	s.i += len(word)
	return nil
}

// number validates the number at i and returns its text.
func (s *scanner) number() ([]byte, error) {
	b, start := s.b, s.i
	if b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && b[s.i] >= '1' && b[s.i] <= '9':
		s.digits()
	default:
		return nil, s.syntaxErr("in numeric literal")
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, s.syntaxErr("after decimal point in numeric literal")
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, s.syntaxErr("in exponent of numeric literal")
		}
	}
	return b[start:s.i], nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}
