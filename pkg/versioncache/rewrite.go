package versioncache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Keys WithRV looks for: metadata.resourceVersion.
const (
	keyMetadata        = "metadata"
	keyResourceVersion = "resourceVersion"
)

// WithRV returns a copy of o whose RV and metadata.resourceVersion are rv.
// Only the resourceVersion value in Raw changes; every other byte is kept.
// When Raw has no metadata.resourceVersion yet, Raw is decoded and
// re-encoded with the field added (numbers kept exactly).
func (o *Object) WithRV(rv uint64) (*Object, error) {
	if o == nil {
		return nil, errors.New("set resourceVersion: nil object")
	}
	raw, err := rewriteRV(o.Raw, rv)
	if err != nil {
		return nil, fmt.Errorf("set resourceVersion of %s/%s: %w", o.Namespace, o.Name, err)
	}
	c := *o
	c.RV = rv
	c.Raw = raw
	return &c, nil
}

// valueSpan is the byte range [start, end) of one JSON value in a document.
type valueSpan struct{ start, end int }

func rewriteRV(raw []byte, rv uint64) ([]byte, error) {
	spans, err := findRVSpans(raw)
	if err != nil {
		return nil, err
	}
	if len(spans) == 0 {
		return addRV(raw, rv)
	}
	value := strconv.AppendQuote(nil, strconv.FormatUint(rv, 10))
	out := make([]byte, 0, len(raw)+len(spans)*len(value))
	prev := 0
	for _, s := range spans {
		out = append(out, raw[prev:s.start]...)
		out = append(out, value...)
		prev = s.end
	}
	return append(out, raw[prev:]...), nil
}

// findRVSpans returns where metadata.resourceVersion values sit in raw, a
// JSON object. A duplicated key yields several spans; all are rewritten so
// every decoder agrees on the result.
func findRVSpans(raw []byte) ([]valueSpan, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var spans []valueSpan
	for dec.More() {
		key, err := readKey(dec)
		if err != nil {
			return nil, err
		}
		if key != keyMetadata || nextByte(raw, dec.InputOffset()) != '{' {
			if _, err := skipValue(dec); err != nil {
				return nil, err
			}
			continue
		}
		found, err := findRVInMeta(dec)
		if err != nil {
			return nil, err
		}
		spans = append(spans, found...)
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after object")
	}
	return spans, nil
}

// findRVInMeta walks the metadata object the decoder is positioned at.
func findRVInMeta(dec *json.Decoder) ([]valueSpan, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var spans []valueSpan
	for dec.More() {
		key, err := readKey(dec)
		if err != nil {
			return nil, err
		}
		n, err := skipValue(dec)
		if err != nil {
			return nil, err
		}
		if key == keyResourceVersion {
			end := int(dec.InputOffset())
			spans = append(spans, valueSpan{start: end - n, end: end})
		}
	}
	return spans, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("got %v, want %q", tok, want)
	}
	return nil
}

func readKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("got %v, want an object key", tok)
	}
	return key, nil
}

// skipValue consumes the next value and returns its length in bytes. The
// decoder's offset is then just past the value.
func skipValue(dec *json.Decoder) (int, error) {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return 0, err
	}
	return len(v), nil
}

// nextByte returns the first byte of the value following a key that ends
// at off, skipping whitespace and the colon; 0 at the end of raw.
func nextByte(raw []byte, off int64) byte {
	for i := int(off); i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\r', '\n', ':':
		default:
			return raw[i]
		}
	}
	return 0
}

// addRV sets metadata.resourceVersion in a document that lacks it.
func addRV(raw []byte, rv uint64) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, errors.New("object is null")
	}
	meta, ok := doc[keyMetadata].(map[string]any)
	if !ok {
		if doc[keyMetadata] != nil {
			return nil, errors.New("metadata is not an object")
		}
		meta = map[string]any{}
		doc[keyMetadata] = meta
	}
	meta[keyResourceVersion] = strconv.FormatUint(rv, 10)
	return json.Marshal(doc)
}
