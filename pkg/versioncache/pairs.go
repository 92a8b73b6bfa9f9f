package versioncache

import (
	"encoding/binary"
	"errors"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"
)

// Pairs is an immutable set of string key/value pairs, the compact form
// in which an Object holds its labels and selectable fields for its whole
// life: one string, where a map costs hundreds of bytes per object. It
// implements labels.Labels (Has, Get, Lookup) and fields.Fields (Has, Get), so selectors
// match it as they match a labels.Set or fields.Set. The zero Pairs is
// empty.
//
// Layout of s, when not empty: the pair count n, then 2n ends, each a
// little-endian uint32 (pairsWordSize bytes), then the data: every key
// followed by its value, keys in ascending order. ends[2i] is where key i
// ends in the data, ends[2i+1] where its value ends; key i starts where
// value i-1 ends (0 for the first).
type Pairs struct {
	s string
}

// pairsWordSize is the size in bytes of the count and of each end.
const pairsWordSize = 4

// errPairsTooLarge is returned by PairsOf for pairs whose total length
// does not fit the uint32 ends.
var errPairsTooLarge = errors.New("labels or fields too large")

// PairsOf returns the Pairs of m. It fails only when the keys and values
// together exceed 4 GiB.
func PairsOf(m map[string]string) (Pairs, error) {
	if len(m) == 0 {
		return Pairs{}, nil
	}
	var small [pairsSmall]string
	keys := small[:0]
	data := 0
	for k, v := range m {
		keys = append(keys, k)
		data += len(k) + len(v)
	}
	header := pairsWordSize * (1 + 2*len(keys))
	if uint64(data)+uint64(header) > math.MaxUint32 {
		return Pairs{}, errPairsTooLarge
	}
	slices.Sort(keys)
	var b strings.Builder
	b.Grow(header + data)
	var word [pairsWordSize]byte
	put := func(n int) {
		binary.LittleEndian.PutUint32(word[:], uint32(n))
		b.Write(word[:])
	}
	put(len(keys))
	end := 0
	for _, k := range keys {
		end += len(k)
		put(end)
		end += len(m[k])
		put(end)
	}
	for _, k := range keys {
		b.WriteString(k)
		b.WriteString(m[k])
	}
	return Pairs{s: b.String()}, nil
}

// pairsSmall is how many keys PairsOf sorts without allocating: more than
// any built-in kind has selectable fields, and than most objects have
// labels.
const pairsSmall = 16

// Len returns the number of pairs.
func (p Pairs) Len() int {
	if p.s == "" {
		return 0
	}
	return int(p.word(0))
}

// word returns the i-th uint32 of the header.
func (p Pairs) word(i int) uint32 {
	b := p.s[pairsWordSize*i : pairsWordSize*(i+1)]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// pair returns the key and value of pair i < Len().
func (p Pairs) pair(i int) (string, string) {
	data := p.s[pairsWordSize*(1+2*p.Len()):]
	start := uint32(0)
	if i > 0 {
		start = p.word(2 * i)
	}
	keyEnd, valueEnd := p.word(1+2*i), p.word(2+2*i)
	return data[start:keyEnd], data[keyEnd:valueEnd]
}

// Lookup returns the value of key and whether p has it.
func (p Pairs) Lookup(key string) (string, bool) {
	n := p.Len()
	i := sort.Search(n, func(i int) bool {
		k, _ := p.pair(i)
		return k >= key
	})
	if i == n {
		return "", false
	}
	k, v := p.pair(i)
	if k != key {
		return "", false
	}
	return v, true
}

// Has reports whether p has key.
func (p Pairs) Has(key string) bool {
	_, ok := p.Lookup(key)
	return ok
}

// Get returns the value of key, "" when p lacks it.
func (p Pairs) Get(key string) string {
	v, _ := p.Lookup(key)
	return v
}

// All yields every pair in ascending key order.
func (p Pairs) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i := range p.Len() {
			if !yield(p.pair(i)) {
				return
			}
		}
	}
}

// String returns the pairs as labels.Set and fields.Set print them:
// key=value, sorted by key, joined by commas.
func (p Pairs) String() string {
	parts := make([]string, 0, p.Len())
	for k, v := range p.All() {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}
