package kinds

import "fmt"

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
}

// SplitList splits body, a JSON LIST response, in one walk. Everything
// but the items is validated; an item's bytes are only skimmed, as the
// one walk that reads each (ScanObject) validates them. A null body is an
// empty list, as decoding would make it.
func SplitList(body []byte) (List, error) {
	var l List
	s := scanner{b: body}
	switch c := s.ws(); c {
	case 'n':
		if err := s.lit("null"); err != nil {
			return l, err
		}
		return l, s.end()
	case '{':
	case 0:
		return l, s.syntaxErr("")
	default:
		return l, fmt.Errorf("cannot unmarshal %s into a list", jsonType(c))
	}
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
			return listItems(s, &l)
		}
		return s.skip()
	})
	if err != nil {
		return l, err
	}
	return l, s.end()
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

// listItems splits the items array; a repeated one replaces the earlier.
func listItems(s *scanner, l *List) error {
	switch c := s.ws(); c {
	case 'n':
		err := validate(l.Items)
		l.Items = nil
		if err != nil {
			return err
		}
		return s.lit("null")
	case '[':
	default:
		return fmt.Errorf("cannot unmarshal %s into list field items of type array", jsonType(c))
	}
	if err := validate(l.Items); err != nil {
		return err
	}
	l.Items = nil
	return s.array(func(s *scanner, _ int) error {
		start := s.ws()
		begin := s.i
		var err error
		if start == '{' || start == '[' {
			err = s.skim()
		} else {
			err = s.skip()
		}
		l.Items = append(l.Items, s.b[begin:s.i])
		return err
	})
}
