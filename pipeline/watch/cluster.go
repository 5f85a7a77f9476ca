package watch

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Near-duplicate posts are found by MinHash (Broder 1997) over the post's
// words and word pairs, with locality-sensitive hashing to find the
// candidates: a signature of sigLen minimum hashes, cut into bands of
// bandRows; two posts that agree on a whole band are compared, and are one
// cluster when their signatures agree on at least MinSimilarity of the
// hashes (an estimate of the Jaccard similarity of their word sets). A
// repost that adds a few words, a retweet prefix, a link or other case
// stays in its text's cluster; URLs and @handles are left out (a repost
// changes them). A post of fewer than minWords words is matched by its
// words exactly: a signature of two words says little.

// MinSimilarity is the least estimated Jaccard similarity of two posts'
// words (and word pairs) that makes them one cluster.
const MinSimilarity = 0.7

const (
	sigLen   = 32
	bandRows = 4
	bands    = sigLen / bandRows
	minWords = 4
)

// sketch is what a post is clustered by.
type sketch struct {
	ok    bool // the post has words
	exact bool // too few for a signature: key is the hash of its words
	key   uint64
	sig   [sigLen]uint32
}

// seeds are the odd multipliers of the hash family h_i(x) = hi32(x * a_i).
var seeds = func() (s [sigLen]uint64) {
	x := uint64(0x9E3779B97F4A7C15)
	for i := range s {
		// splitmix64
		x += 0x9E3779B97F4A7C15
		z := x
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		s[i] = (z ^ (z >> 31)) | 1
	}
	return s
}()

// sketchOf reads text's words (lower-cased runs of letters and digits,
// leaving out URLs, @handles and a retweet's "RT").
func sketchOf(text string) sketch {
	var s sketch
	for i := range s.sig {
		s.sig[i] = ^uint32(0)
	}
	var prev uint64
	n := 0
	h := fnv.New64a()
	whole := uint64(14695981039346656037)
	add := func(x uint64) {
		for i, a := range seeds {
			if v := uint32((x * a) >> 32); v < s.sig[i] {
				s.sig[i] = v
			}
		}
	}
	var buf [4]byte
	for field := range strings.FieldsSeq(text) {
		if skipField(field) {
			continue
		}
		for len(field) > 0 {
			i := strings.IndexFunc(field, isWordRune)
			if i < 0 {
				break
			}
			field = field[i:]
			j := strings.IndexFunc(field, notWordRune)
			if j < 0 {
				j = len(field)
			}
			w := field[:j]
			field = field[j:]
			h.Reset()
			for _, r := range w {
				k := utf8.EncodeRune(buf[:], unicode.ToLower(r))
				h.Write(buf[:k])
			}
			x := h.Sum64()
			add(x)
			if n > 0 {
				add(bits.RotateLeft64(prev, 17) ^ x ^ 0x5bd1e995) // the pair of words
			}
			whole = (whole ^ x) * 1099511628211
			prev = x
			n++
		}
	}
	switch {
	case n == 0:
		return sketch{}
	case n < minWords:
		return sketch{ok: true, exact: true, key: whole}
	}
	s.ok = true
	return s
}

func skipField(f string) bool {
	return strings.HasPrefix(f, "@") || hasPrefixFold(f, "http://") || hasPrefixFold(f, "https://") || strings.EqualFold(f, "RT")
}

func isWordRune(r rune) bool  { return unicode.IsLetter(r) || unicode.IsNumber(r) }
func notWordRune(r rune) bool { return !isWordRune(r) }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// similarity estimates the Jaccard similarity of two signatures.
func similarity(a, b *[sigLen]uint32) float64 {
	n := 0
	for i := range a {
		if a[i] == b[i] {
			n++
		}
	}
	return float64(n) / sigLen
}

func (s *sketch) band(b int) uint64 {
	var x uint64 = uint64(b) + 1
	for _, v := range s.sig[b*bandRows : (b+1)*bandRows] {
		x = (x ^ uint64(v)) * 0x100000001B3
	}
	return x
}

// encode is the sketch as the store keeps it: "" (no words), "x:" and the
// words' hash, or "m:" and the signature, in hex.
func (s sketch) encode() string {
	switch {
	case !s.ok:
		return ""
	case s.exact:
		return "x:" + hex.EncodeToString(binary.BigEndian.AppendUint64(nil, s.key))
	}
	b := make([]byte, 0, 4*sigLen)
	for _, v := range s.sig {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return "m:" + hex.EncodeToString(b)
}

func decodeSketch(s string) sketch {
	kind, h, _ := strings.Cut(s, ":")
	b, err := hex.DecodeString(h)
	switch {
	case err != nil:
	case kind == "x" && len(b) == 8:
		return sketch{ok: true, exact: true, key: binary.BigEndian.Uint64(b)}
	case kind == "m" && len(b) == 4*sigLen:
		out := sketch{ok: true}
		for i := range out.sig {
			out.sig[i] = binary.BigEndian.Uint32(b[4*i:])
		}
		return out
	}
	return sketch{}
}

// index finds the cluster of a sketch or an image key. It holds at most
// capacity clusters in two generations: when the newer is full, the older
// is forgotten, so memory stays flat over a long watch and an old cluster
// that comes back starts again (its count kept in the store).
type index struct {
	capacity int
	cur, old *generation
}

type generation struct {
	n      int
	bands  [bands]map[uint64][]*entry
	exact  map[uint64]int64
	images map[string]int64
}

type entry struct {
	sig     [sigLen]uint32
	cluster int64
}

func newGeneration() *generation {
	g := &generation{exact: map[uint64]int64{}, images: map[string]int64{}}
	for i := range g.bands {
		g.bands[i] = map[uint64][]*entry{}
	}
	return g
}

func newIndex(capacity int) *index {
	return &index{capacity: max(capacity, 2), cur: newGeneration(), old: newGeneration()}
}

func (g *generation) find(s *sketch) (int64, bool) {
	if s.exact {
		c, ok := g.exact[s.key]
		return c, ok
	}
	best, bestSim := int64(0), 0.0
	for b := range bands {
		for _, e := range g.bands[b][s.band(b)] {
			if sim := similarity(&e.sig, &s.sig); sim >= MinSimilarity && sim > bestSim {
				best, bestSim = e.cluster, sim
			}
		}
	}
	return best, bestSim > 0
}

// find is the cluster of a text's sketch, else of one of its images.
func (ix *index) find(s sketch, images []string) (int64, bool) {
	if s.ok {
		if c, ok := ix.cur.find(&s); ok {
			return c, true
		}
		if c, ok := ix.old.find(&s); ok {
			return c, true
		}
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

// add files a new cluster under its sketch and images.
func (ix *index) add(cluster int64, s sketch, images []string) {
	if ix.cur.n >= ix.capacity/2 {
		ix.old, ix.cur = ix.cur, newGeneration()
	}
	g := ix.cur
	g.n++
	switch {
	case !s.ok:
	case s.exact:
		g.exact[s.key] = cluster
	default:
		e := &entry{sig: s.sig, cluster: cluster}
		for b := range bands {
			k := s.band(b)
			g.bands[b][k] = append(g.bands[b][k], e)
		}
	}
	ix.addImages(cluster, images)
}

// addImages files a cluster's further images.
func (ix *index) addImages(cluster int64, images []string) {
	for _, k := range images {
		ix.cur.images[k] = cluster
	}
}

// remove forgets a cluster filed under s and images (the store forgot
// it), in both generations.
func (ix *index) remove(cluster int64, s sketch, images []string) {
	for _, g := range []*generation{ix.cur, ix.old} {
		found := false
		switch {
		case !s.ok:
		case s.exact:
			if g.exact[s.key] == cluster {
				delete(g.exact, s.key)
				found = true
			}
		default:
			for b := range bands {
				k := s.band(b)
				es := g.bands[b][k]
				n := len(es)
				es = slices.DeleteFunc(es, func(e *entry) bool { return e.cluster == cluster })
				found = found || len(es) < n
				if len(es) == 0 {
					delete(g.bands[b], k)
				} else {
					g.bands[b][k] = es
				}
			}
		}
		if found {
			g.n--
		}
		for _, k := range images {
			if g.images[k] == cluster {
				delete(g.images, k)
			}
		}
	}
}

// words is text's words as sketchOf reads them, lower-cased.
func words(text string) []string {
	var out []string
	for field := range strings.FieldsSeq(text) {
		if skipField(field) {
			continue
		}
		for w := range strings.FieldsFuncSeq(field, notWordRune) {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}
