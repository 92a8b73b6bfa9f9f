package jsonscan

import (
	"fmt"
	"strings"
)

// List is a JSON LIST response split into its parts.
type List struct {
	// APIVersion and Kind are the list's.
	APIVersion, Kind string
	// Metadata holds the value of each metadata member, in order (a
	// repeated member adds to the earlier ones, as decoding does).
	Metadata [][]byte
	// Items are the bytes of each item, slices of the body.
	Items [][]byte
	// Scans are what ReadList read of each item, by index.
	Scans []Scan
}

// listSplit is the state of one ReadList.
type listSplit struct {
	l List
	// kinds names the fields items are read with.
	kinds Kinds
	// readAs is the apiVersion and item kind the items were read as.
	readAs [2]string
	// tg is what the items are read as.
	tg target
}

// ItemKind is the kind of the items of a list of kind kind: kube names
// its lists after their items with "List" appended.
func ItemKind(kind string) string {
	k, _ := strings.CutSuffix(kind, "List")
	return k
}

// ReadList splits body, a JSON LIST response, in one walk that validates
// it and reads each item, as ScanObject would with the list's apiVersion
// and item kind standing in for the item's own, into Scans: each byte is
// looked at once. An item's header value of the wrong type is its Scan's
// Err; a syntax error anywhere is returned. A null body is an empty list,
// as decoding would make it.
func ReadList(body []byte, kinds Kinds) (List, error) {
	ls := listSplit{kinds: kinds}
	if err := ls.split(body); err != nil {
		return ls.l, err
	}
	l := &ls.l
	if final := [2]string{l.APIVersion, ItemKind(l.Kind)}; len(l.Items) > 0 && final != ls.readAs {
		// The list's apiVersion or kind came after its items.
		for i, it := range l.Items {
			l.Scans[i], _, _ = scan(it, target{apiVersion: final[0], kind: final[1], kinds: kinds}) // valid: read once already
		}
	}
	return ls.l, nil
}

// split walks body.
func (ls *listSplit) split(body []byte) error {
	s := scanner{b: body}
	switch c := s.ws(); c {
	case 'n':
		if err := s.lit("null"); err != nil {
			return err
		}
		return s.end()
	case '{':
	case 0:
		return s.syntaxErr("")
	default:
		return fmt.Errorf("cannot unmarshal %s into a list", jsonType(c))
	}
	l := &ls.l
	err := s.object(func(s *scanner, key []byte) error {
		switch {
		case keyIs(key, "apiVersion"):
			return listString(s, "apiVersion", &l.APIVersion)
		case keyIs(key, "kind"):
			return listString(s, "kind", &l.Kind)
		case keyIs(key, "metadata"):
			start := s.i
			err := s.skip()
			l.Metadata = append(l.Metadata, s.b[start:s.i])
			return err
		case keyIs(key, "items"):
			return ls.items(s)
		}
		return s.skip()
	})
	if err != nil {
		return err
	}
	return s.end()
}

// listString decodes a string member of the list into dst.
func listString(s *scanner, name string, dst *string) error {
	switch c := s.ws(); c {
	case '"':
		v, err := s.readStr()
		*dst = v
		return err
	case 'n':
		return s.lit("null")
	default:
		return fmt.Errorf("cannot unmarshal %s into list field %s of type string", jsonType(c), name)
	}
}

// items splits the items array; a repeated one replaces the earlier.
func (ls *listSplit) items(s *scanner) error {
	l := &ls.l
	switch c := s.ws(); c {
	case 'n':
		l.Items, l.Scans = nil, nil
		return s.lit("null")
	case '[':
	default:
		return fmt.Errorf("cannot unmarshal %s into list field items of type array", jsonType(c))
	}
	l.Items, l.Scans = nil, nil // read, so valid
	ls.readAs = [2]string{l.APIVersion, ItemKind(l.Kind)}
	ls.tg = target{apiVersion: ls.readAs[0], kind: ls.readAs[1], kinds: ls.kinds}
	return s.array(func(s *scanner, _ int) error {
		s.ws()
		begin := s.i
		sc, err := scanValue(s, ls.tg)
		l.Items = append(l.Items, s.b[begin:s.i])
		l.Scans = append(l.Scans, sc)
		return err
	})
}
