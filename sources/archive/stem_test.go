package archive

import (
	"slices"
	"strings"
	"testing"
)

// The second stage reads token streams in place: it must see the stems
// FTS5's ascii tokenizer (and strings.Fields) sees, at the same indexes.
func TestEachStemCutsAsFields(t *testing.T) {
	for _, s := range []string{"", "one", "measl vaccin autism", " lead", "trail ", "double  space", "  ", "éclair café naïv"} {
		var got []string
		n := eachStem(s, func(i int, st string) {
			if i != len(got) {
				t.Errorf("%q: stem %q at index %d; want %d", s, st, i, len(got))
			}
			got = append(got, st)
		})
		want := strings.Fields(s)
		if !slices.Equal(got, want) || n != len(want) || stemCount(s) != len(want) {
			t.Errorf("eachStem(%q) = %q (%d), stemCount %d; want %q", s, got, n, stemCount(s), want)
		}
	}
}

// The id table finds every term of its list at its first index, and
// nothing else; id 0 (no term) is never found.
func TestTermIndexFindsEveryTerm(t *testing.T) {
	ts := []uint32{7, 1 << 20, 3, 0, 7, 12345678, 64, 128, 0}
	for n := 200; n < 400; n += 37 { // beyond the table's first size
		ts = append(ts, uint32(n*1000+1))
	}
	ti := newTermIndex(ts)
	for k, id := range ts {
		got, ok := ti.lookup(id)
		if id == 0 {
			if ok {
				t.Errorf("lookup(0) found index %d", got)
			}
			continue
		}
		if first := slices.Index(ts, id); !ok || got != first {
			t.Errorf("lookup(%d) (index %d) = %d, %v; want %d", id, k, got, ok, first)
		}
	}
	for _, other := range []uint32{8, 2, 1<<20 + 1, 12345677, 65, 4096 + 7} {
		if _, ok := ti.lookup(other); ok {
			t.Errorf("lookup(%d) found a term the list does not hold", other)
		}
	}
}

// A field's stems packed as ids read back as the same ids, in order, at
// the same indexes, whatever their varint length; a truncated last id is
// dropped.
func TestPackedIDsReadBack(t *testing.T) {
	stems, titleSeq, textSeq := stemSeq("measl vaccin", "vaccin caus autism  vaccin", "cdc")
	if want := []string{"measl", "vaccin", "caus", "autism", "cdc"}; !slices.Equal(stems, want) {
		t.Fatalf("stems = %q; want %q", stems, want)
	}
	if !slices.Equal(titleSeq, []uint32{0, 1}) || !slices.Equal(textSeq, []uint32{1, 2, 3, 1}) {
		t.Fatalf("sequences = %v, %v", titleSeq, textSeq)
	}
	ids := []uint32{1, 127, 128, 1<<21 + 5, 1<<32 - 1}
	b := appendIDs(nil, textSeq, ids)
	var got []uint32
	n := eachID(b, func(i int, id uint32) {
		if i != len(got) {
			t.Errorf("id %d at index %d; want %d", id, i, len(got))
		}
		got = append(got, id)
	})
	want := []uint32{127, 128, 1<<21 + 5, 127}
	if !slices.Equal(got, want) || n != 4 || idCount(b) != 4 {
		t.Errorf("read back %v (%d, idCount %d); want %v", got, n, idCount(b), want)
	}
	if n := eachID(b[:len(b)-1], func(int, uint32) {}); n != 3 {
		t.Errorf("a truncated stream read %d ids; want 3", n)
	}
	all := appendIDs(nil, []uint32{4}, ids)
	if n := eachID(all, func(_ int, id uint32) { got = append(got[:0], id) }); n != 1 || got[0] != 1<<32-1 {
		t.Errorf("the largest id read back as %v", got)
	}
}

// PostgreSQL's in-process numbering gives a stem one id for good, packs a
// token stream as those ids and reads them back as the stems.
func TestVocabNumbersStems(t *testing.T) {
	v := &vocab{ids: map[string]uint32{}}
	b := v.pack("measl vaccin  autism vaccin")
	var got []uint32
	eachID(b, func(_ int, id uint32) { got = append(got, id) })
	if !slices.Equal(got, []uint32{1, 2, 3, 2}) {
		t.Fatalf("packed as %v; want [1 2 3 2]", got)
	}
	if id := v.id("autism"); id != 3 {
		t.Errorf("autism numbered %d again; want 3", id)
	}
	if ts := v.termsOf([]uint32{2, 0, 9, 3}); !slices.Equal(ts, []string{"vaccin", "", "", "autism"}) {
		t.Errorf("termsOf = %q", ts)
	}
}
