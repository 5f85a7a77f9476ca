package archive

import (
	"context"
	"fmt"
	"testing"
)

// A term's blocks stay full, disjoint and exactly the documents holding
// it through small writes, deletes in the middle of a block, pages
// re-stemmed under old ids and batches mixing new pages with old ones.
func TestPostingsFollowEdits(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	page := func(i int, extra string) Doc {
		return Doc{URL: fmt.Sprintf("https://p.example/%d", i), Title: fmt.Sprintf("item %d headline", i%7),
			Text: fmt.Sprintf("common words in every page, and page%d alone %s", i, extra)}
	}
	// Many small writes, as checks archive their pages.
	for w := range 100 {
		var docs []Doc
		for i := range 25 {
			docs = append(docs, page(w*25+i, ""))
		}
		if err := s.AddAll(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	if got := blockSizes(t, s, "common", fieldAny); fmt.Sprint(got) != fmt.Sprint([]int{1024, 1024, 452}) {
		t.Errorf("blocks of a word in 2,500 pages written 25 at a time: %v; want them full", got)
	}
	checkStats(t, s)
	// Deletes in the first and the middle block, and of the newest page.
	for _, i := range []int{0, 700, 1500, 2499} {
		if ok, err := s.Delete(ctx, page(i, "").URL); err != nil || !ok {
			t.Fatalf("Delete = %v, %v", ok, err)
		}
	}
	checkStats(t, s)
	// Old pages re-stemmed (a word gained, one lost), in one batch with
	// new pages and with a page put twice.
	batch := []Doc{
		{URL: page(10, "").URL, Text: "rewritten without the usual words, now about zeppelins"},
		page(3000, "zeppelins"),
		{URL: page(1200, "").URL, Text: "zeppelins again, common too"},
		page(3001, ""),
		{URL: page(3001, "").URL, Text: "put twice in one batch, the second about zeppelins"},
		page(2499, "back again"), // a deleted page's URL, under a new id
	}
	if err := s.AddAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	checkStats(t, s)
	hits, err := s.Search(ctx, "zeppelins", SearchOptions{Limit: 10})
	if err != nil || len(hits) != 4 {
		t.Errorf("search for a word four pages now hold: %d hits, %v", len(hits), err)
	}
	for _, n := range blockSizes(t, s, "common", fieldAny) {
		if n > blockIDs || n == 0 {
			t.Errorf("a block of %d ids", n)
		}
	}
}

// Two stores on one file (two processes, or two connections' worth of
// writers) append to the same terms in turn: each remembers its terms'
// last blocks (headCache) and must see that the other has written since,
// or it would append to a block that is no longer the last.
func TestPostingsTwoWritersInTurn(t *testing.T) {
	ctx := context.Background()
	a, path := openTemp(t)
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page := func(i int) Doc {
		return Doc{URL: fmt.Sprintf("https://p.example/%d", i), Title: fmt.Sprintf("turn %d", i%3),
			Text: fmt.Sprintf("shared words in every page, page%d, and set%d", i, i%5)}
	}
	n := 0
	batch := func(size int) []Doc {
		var docs []Doc
		for range size {
			docs = append(docs, page(n))
			n++
		}
		return docs
	}
	// Batches big enough to fill blocks (so one writer's cached last
	// block is full or replaced by the other's), small ones in between,
	// and a delete that rewrites a block another store has cached.
	for turn := range 12 {
		s := a
		if turn%2 == 1 {
			s = b
		}
		size := 7
		if turn%3 == 0 {
			size = 700
		}
		if err := s.AddAll(ctx, batch(size)); err != nil {
			t.Fatal(err)
		}
		if turn == 5 {
			if ok, err := b.Delete(ctx, page(n-1).URL); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
		}
	}
	checkStats(t, a)
	checkStats(t, b)
	for _, s := range []*Store{a, b} {
		hits, err := s.Search(ctx, "shared", SearchOptions{Limit: 5})
		if err != nil || len(hits) != 5 {
			t.Errorf("search for a word every page holds: %d hits, %v", len(hits), err)
		}
	}
}

// A block decodes to the ids it was made of, and a malformed one is an
// error.
func TestBlockRoundTrip(t *testing.T) {
	ids := []int64{1, 2, 3, 200, 70000, maxPostingID}
	b := appendBlock(nil, 0, ids)
	got, err := decodeBlock(nil, b, 0)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Errorf("decodeBlock = %v, %v; want %v", got, err, ids)
	}
	// Runs appended after a block's ids read as its next ids.
	runs := appendRun(appendRun(appendBlock(nil, 0, ids[:2]), ids[2:4]), ids[4:])
	if got, err := decodeBlock(nil, runs, 0); err != nil || fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Errorf("decodeBlock of runs = %v, %v; want %v", got, err, ids)
	}
	if got, _ := decodeBlock(nil, b, 3); len(got) != 3 {
		t.Errorf("decodeBlock with a limit of 3 gave %v", got)
	}
	for _, bad := range [][]byte{{0x80}, appendBlock(nil, 0, []int64{maxPostingID, maxPostingID + 5}),
		appendRun(appendBlock(nil, 0, []int64{5, 9}), []int64{9, 12}), {0x05, 0x00}} {
		if got, err := decodeBlock(nil, bad, 0); err == nil {
			t.Errorf("decodeBlock(%x) = %v; want an error", bad, got)
		}
	}
}
