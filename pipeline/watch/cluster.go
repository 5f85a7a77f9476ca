package watch

import (
	"hash/fnv"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Near-duplicate posts are found by SimHash (Charikar 2002) over the
// post's words and word pairs: two texts that share most of their words
// have fingerprints a few bits apart. As in Manku, Jain and Das Sarma
// (WWW 2007), two fingerprints at Hamming distance MaxDistance or less are
// the same text; with four 16-bit bands, two such fingerprints agree on at
// least one band whole, so each post is compared only with the clusters
// that share a band with it. A post of fewer than minWords words is matched
// by its words exactly: a fingerprint of two words says little.

// MaxDistance is the most bits two fingerprints of one cluster differ by.
const MaxDistance = 3

const minWords = 4

// fingerprint is the SimHash of text's words, and whether the text had
// enough words for one (otherwise it is a hash of the words, to be
// matched exactly). URLs and @handles are left out: a repost changes them.
func fingerprint(text string) (fp uint64, exact bool, ok bool) {
	var v [64]int
	var prev uint64
	n := 0
	h := fnv.New64a()
	var whole uint64 = 14695981039346656037
	add := func(x uint64) {
		for i := range 64 {
			if x&(1<<i) != 0 {
				v[i]++
			} else {
				v[i]--
			}
		}
	}
	for field := range strings.FieldsSeq(text) {
		if strings.HasPrefix(field, "@") || strings.HasPrefix(field, "http://") || strings.HasPrefix(field, "https://") ||
			strings.EqualFold(field, "RT") {
			continue
		}
		for len(field) > 0 {
			// the word: a run of letters and digits, lower-cased
			i := strings.IndexFunc(field, isWordRune)
			if i < 0 {
				break
			}
			field = field[i:]
			j := strings.IndexFunc(field, func(r rune) bool { return !isWordRune(r) })
			if j < 0 {
				j = len(field)
			}
			w := field[:j]
			field = field[j:]
			h.Reset()
			for _, r := range w {
				var buf [4]byte
				k := utf8.EncodeRune(buf[:], unicode.ToLower(r))
				h.Write(buf[:k])
			}
			x := h.Sum64()
			add(x)
			if n > 0 {
				add(bits.RotateLeft64(prev, 17) ^ x) // the pair of words
			}
			whole = (whole ^ x) * 1099511628211
			prev = x
			n++
		}
	}
	if n == 0 {
		return 0, false, false
	}
	if n < minWords {
		return whole, true, true
	}
	for i := range 64 {
		if v[i] > 0 {
			fp |= 1 << i
		}
	}
	return fp, false, true
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// index finds the cluster of a fingerprint or an image key. It holds at
// most capacity clusters in two generations: when the newer is full, the
// older is forgotten, so memory stays flat over a long watch and an old
// cluster that comes back starts again (its count kept in the store).
type index struct {
	capacity int
	cur, old *generation
}

type generation struct {
	n      int
	bands  [4]map[uint16][]entry
	exact  map[uint64]int64
	images map[string]int64
}

type entry struct {
	fp      uint64
	cluster int64
}

func newGeneration() *generation {
	g := &generation{exact: map[uint64]int64{}, images: map[string]int64{}}
	for i := range g.bands {
		g.bands[i] = map[uint16][]entry{}
	}
	return g
}

func newIndex(capacity int) *index {
	return &index{capacity: max(capacity, 2), cur: newGeneration(), old: newGeneration()}
}

func (g *generation) find(fp uint64, exact bool) (int64, bool) {
	if exact {
		c, ok := g.exact[fp]
		return c, ok
	}
	for b := range 4 {
		for _, e := range g.bands[b][uint16(fp>>(16*b))] {
			if bits.OnesCount64(e.fp^fp) <= MaxDistance {
				return e.cluster, true
			}
		}
	}
	return 0, false
}

// find is the cluster of a text's fingerprint, else of one of its images.
func (ix *index) find(fp uint64, exact bool, images []string) (int64, bool) {
	if c, ok := ix.cur.find(fp, exact); ok {
		return c, true
	}
	if c, ok := ix.old.find(fp, exact); ok {
		return c, true
	}
	for _, k := range images {
		if c, ok := ix.cur.images[k]; ok {
			return c, true
		}
		if c, ok := ix.old.images[k]; ok {
			return c, true
		}
	}
	return 0, false
}

// add files a new cluster under its fingerprint and images.
func (ix *index) add(cluster int64, fp uint64, exact, hasText bool, images []string) {
	if ix.cur.n >= ix.capacity/2 {
		ix.old, ix.cur = ix.cur, newGeneration()
	}
	g := ix.cur
	g.n++
	switch {
	case !hasText:
	case exact:
		g.exact[fp] = cluster
	default:
		for b := range 4 {
			k := uint16(fp >> (16 * b))
			g.bands[b][k] = append(g.bands[b][k], entry{fp, cluster})
		}
	}
	for _, k := range images {
		g.images[k] = cluster
	}
}
