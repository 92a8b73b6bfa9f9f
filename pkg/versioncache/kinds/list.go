package kinds

import (
	"fmt"
	"strings"
)

// List is a JSON LIST response split into its parts without decoding its
// items.
type List struct {
	// APIVersion and Kind are the list's.
	APIVersion, Kind string
	// Metadata holds the value of each metadata member, in order (a
	// repeated member adds to the earlier ones, as decoding does).
	Metadata [][]byte
	// Items are the bytes of each item, slices of the body.
	Items [][]byte
	// Scans are what ReadList read of each item, by index; nil from
	// SplitList.
	Scans []Scan
}

// listSplit is the state of one SplitList or ReadList.
type listSplit struct {
	l List
	// read is the table ReadList reads items with; nil for SplitList.
	read Table
	// readAs is the apiVersion and item kind the items were read as.
	readAs [2]string
}

// ItemKind is the kind of the items of a list of kind kind: kube names
// its lists after their items with "List" appended.
func ItemKind(kind string) string {
	k, _ := strings.CutSuffix(kind, "List")
	return k
}

// SplitList splits body, a JSON LIST response, in one walk. Everything
// but the items is validated; an item's bytes are only skimmed, as the
// one walk that reads each (ScanObject) validates them. A null body is an
// empty list, as decoding would make it.
func SplitList(body []byte) (List, error) {
	var ls listSplit
	err := ls.split(body)
	return ls.l, err
}

// ReadList is SplitList that also reads each item in the same walk, as
// ScanObject would with the list's apiVersion and item kind standing in
// for the item's own, into Scans: each item byte is looked at once. An
// item's header value of the wrong type is its Scan's Err; a syntax error
// anywhere is returned.
func (t Table) ReadList(body []byte) (List, error) {
	ls := listSplit{read: t}
	if err := ls.split(body); err != nil {
		return ls.l, err
	}
	l := &ls.l
	if final := [2]string{l.APIVersion, ItemKind(l.Kind)}; len(l.Items) > 0 && final != ls.readAs {
		// The list's apiVersion or kind came after its items.
		for i, it := range l.Items {
			l.Scans[i], _, _ = t.scan(it, final[0], final[1], nil) // valid: read once already
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

// validate checks that skimmed values are valid JSON, as those of an items
// array that a later one replaces are read by no one else.
func validate(items [][]byte) error {
	for _, it := range items {
		s := scanner{b: it}
		if err := s.skip(); err != nil {
			return err
		}
	}
	return nil
}

// items splits the items array; a repeated one replaces the earlier.
func (ls *listSplit) items(s *scanner) error {
	l := &ls.l
	switch c := s.ws(); c {
	case 'n':
		err := ls.dropItems()
		if err != nil {
			return err
		}
		return s.lit("null")
	case '[':
	default:
		return fmt.Errorf("cannot unmarshal %s into list field items of type array", jsonType(c))
	}
	if err := ls.dropItems(); err != nil {
		return err
	}
	ls.readAs = [2]string{l.APIVersion, ItemKind(l.Kind)}
	return s.array(func(s *scanner, _ int) error {
		c := s.ws()
		begin := s.i
		var err error
		switch {
		case ls.read != nil:
			var sc Scan
			sc, err = ls.read.scanValue(s, ls.readAs[0], ls.readAs[1], nil)
			l.Scans = append(l.Scans, sc)
		case c == '{' || c == '[':
			err = s.skim()
		default:
			err = s.skip()
		}
		l.Items = append(l.Items, s.b[begin:s.i])
		return err
	})
}

// dropItems forgets the items of an items array a later one replaces,
// first validating them if they were only skimmed, as no one else will.
func (ls *listSplit) dropItems() error {
	var err error
	if ls.read == nil {
		err = validate(ls.l.Items)
	}
	ls.l.Items, ls.l.Scans = nil, nil
	return err
}
