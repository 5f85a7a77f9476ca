package archive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// Several writers rewriting the same few stored pages at once (goroutines
// of one Store and of two Stores on one database, as a check archiving a
// page while `muse archive add` imports it), some inserting the same new
// page at the same moment, beside a deleter of those pages and two
// imports that meet them too:
// no write fails, every term's postings and counts are those of the stored
// documents, each page is stored once, and it is the last writer's.
func TestPostgresConcurrentRewritesKeepCounts(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	stores := openStores(t, url, 2)
	words := strings.Fields("river bridge flood valley mayor election vaccine school budget storm harbour festival " +
		"council railway hospital drought wildfire tariff senate court ferry orchard glacier pension")
	// version is writer g's k-th text (or title, publisher) for page j:
	// words that differ from one version to the next, so a rewrite moves
	// postings, and a token of its own.
	pick := func(seed, n int) string {
		var out []string
		for i := range n {
			out = append(out, words[(seed*31+i*(seed%7+1)*13)%len(words)])
		}
		return strings.Join(out, " ")
	}
	version := func(u string, g, k, j int) Doc {
		seed := g*1009 + k*101 + j*11
		return Doc{URL: u, Title: pick(seed, 3) + fmt.Sprintf(" title%dk%dj%d", g, k, j),
			Text:      pick(seed+5, 6+seed%9) + fmt.Sprintf(" text%dk%dj%d", g, k, j),
			Publisher: pick(seed+9, 1) + " courier"}
	}
	const nShared = 4
	shared := make([]string, nShared)
	for j := range shared {
		shared[j] = fmt.Sprintf("https://r.example/shared/%d", j)
	}

	// Two imports of pages of their own, the shared pages in every batch
	// and a few pages both files hold.
	var written sync.Map // every URL stored
	for _, u := range shared {
		written.Store(u, true)
	}
	final := map[string][]Doc{} // each writer's last version of each shared page
	var finalMu sync.Mutex
	addFinal := func(d Doc) {
		finalMu.Lock()
		defer finalMu.Unlock()
		final[d.URL] = append(final[d.URL], d)
	}
	dir := t.TempDir()
	var paths []string
	const importPages = 2*batchSize + 500
	for f := range 2 {
		var lines []string
		last := map[string]Doc{}
		for i := range importPages {
			var d Doc
			switch {
			case i%batchSize == 100+f*400: // in every batch, at different places in the two files
				j := (i / batchSize) % nShared
				d = version(shared[j], 100+f, i, j)
			case i%50 == 7: // both files
				d = Doc{URL: fmt.Sprintf("https://r.example/both/%d", i), Title: pick(i, 2), Text: pick(i+3, 8)}
			default:
				d = Doc{URL: fmt.Sprintf("https://r.example/file%d/%d", f, i), Title: pick(i+f, 2), Text: pick(i+f+3, 10) + fmt.Sprintf(" page%d", i)}
			}
			last[d.URL] = d
			written.Store(d.URL, true)
			b := fmt.Sprintf(`{"url":%q,"title":%q,"text":%q,"publisher":%q}`, d.URL, d.Title, d.Text, d.Publisher)
			lines = append(lines, b)
		}
		for _, u := range shared {
			if d, ok := last[u]; ok {
				addFinal(d)
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("part%d.jsonl", f))
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}

	var wg sync.WaitGroup
	var importing atomic.Int32
	importing.Store(int32(len(paths)))
	results := make([]ImportResult, len(paths))
	errs := make([]strings.Builder, len(paths))
	for i := range paths {
		wg.Go(func() {
			defer importing.Add(-1)
			results[i] = stores[i].Import(ctx, []string{paths[i]}, ImportOptions{Errors: &errs[i]})
		})
	}
	// Rewriters: while the imports run (and at least a few rounds, at most
	// maxRounds), each puts the shared pages, alone or in a batch of its
	// own order, whole or only a field; in some rounds every rewriter
	// inserts the same new page. Meanwhile a deleter deletes the shared
	// pages in turn. When every rewriter is done with its rounds and the
	// deleter has stopped, each puts every shared page whole, a last time.
	const writers, minRounds, maxRounds = 4, 8, 400
	var rounds, deletes atomic.Int64
	var inRounds atomic.Int32
	inRounds.Store(writers)
	var lastRound sync.WaitGroup // the rounds and the deleter done
	lastRound.Add(writers + 1)
	wg.Go(func() {
		defer lastRound.Done()
		for k := 0; k < maxRounds && inRounds.Load() > 0; k++ {
			if _, err := stores[k%len(stores)].Delete(ctx, shared[k%nShared]); err != nil {
				t.Errorf("deleter: %v", err)
				return
			}
			deletes.Add(1)
		}
	})
	for g := range writers {
		s := stores[g%len(stores)]
		order := slices.Clone(shared)
		for i := range order { // a permutation of the writer's own
			k := (i*(g+1) + g) % len(order)
			order[i], order[k] = order[k], order[i]
		}
		wg.Go(func() {
			roundsDone := sync.OnceFunc(func() { inRounds.Add(-1); lastRound.Done() })
			defer roundsDone()
			put := func(docs ...Doc) bool {
				if err := s.AddAll(ctx, docs); err != nil {
					t.Errorf("writer %d: %v", g, err)
					return false
				}
				return true
			}
			k := 0
			for ; k < maxRounds && (k < minRounds || importing.Load() > 0); k++ {
				var ok bool
				switch k % 3 {
				case 0:
					j := (g + k) % nShared
					ok = put(version(shared[j], g, k, j))
				case 1:
					fresh := fmt.Sprintf("https://r.example/new/%d", k)
					written.Store(fresh, true)
					docs := []Doc{version(fresh, g, k, nShared)}
					for j, u := range order {
						docs = append(docs, version(u, g, k, j))
					}
					ok = put(docs...)
				default:
					var docs []Doc
					for j, u := range order {
						d := version(u, g, k, j)
						if (g+k+j)%2 == 0 {
							d.Title, d.Publisher = "", ""
						} else {
							d.Text = ""
						}
						docs = append(docs, d)
					}
					ok = put(docs...)
				}
				if !ok {
					return
				}
			}
			rounds.Add(int64(k))
			roundsDone()
			lastRound.Wait()
			var docs []Doc
			for j, u := range order {
				d := version(u, g, maxRounds, j)
				docs = append(docs, d)
				addFinal(d)
			}
			put(docs...)
		})
	}
	wg.Wait()
	t.Logf("%d rounds of %d rewriters and %d deletes beside the imports", rounds.Load(), writers, deletes.Load())
	for i, r := range results {
		if r.Added != importPages || r.Failed != 0 {
			t.Errorf("import %d = %+v; want %d added: %s", i, r, importPages, errs[i].String())
		}
	}
	// The postings, counts and statistics are the stored documents',
	// whatever failed.
	checkTerms(t, stores[0])
	checkCounts(t, stores[0])
	checkStats(t, stores[0])
	if t.Failed() {
		return
	}
	want := 0
	written.Range(func(_, _ any) bool { want++; return true })
	var stored, distinct int
	if err := stores[0].db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT url) FROM archive_docs`).Scan(&stored, &distinct); err != nil {
		t.Fatal(err)
	}
	if stored != want || distinct != want {
		t.Errorf("archive holds %d documents under %d URLs; want %d", stored, distinct, want)
	}
	for _, u := range shared {
		d, err := stores[1].Get(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(final[u], func(f Doc) bool {
			return f.Title == d.Title && f.Text == d.Text && f.Publisher == d.Publisher
		}) {
			t.Errorf("%s holds %q / %q / %q: no writer's last version", u, d.Title, d.Text, d.Publisher)
		}
	}
}

// A write the server aborts to break a deadlock with another transaction
// is run again, in a new transaction, and stores its batch: the user's
// batch does not fail.
func TestPostgresWriteRetriedAfterDeadlock(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	first := []Doc{
		{URL: "https://q.example/x", Title: "Bridge closed", Text: "The old bridge closed."},
		{URL: "https://q.example/y", Title: "River festival", Text: "The festival by the river."},
	}
	if err := s.AddAll(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := []Doc{
		{URL: "https://q.example/x", Title: "Ferry cancelled", Text: "Storms cancelled the ferry."},
		{URL: "https://q.example/y", Title: "Harbour reopened", Text: "The harbour reopened after the storm."},
	}
	rows := make([]docRow, len(second))
	for i, d := range second {
		r, err := s.newRow(d)
		if err != nil {
			t.Fatal(err)
		}
		rows[i] = r
	}
	lock := s.sql(`SELECT 1 FROM docs WHERE url = ? FOR UPDATE`)
	// The other transaction holds x.
	other, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	if _, err := other.ExecContext(ctx, lock, rows[0].key); err != nil {
		t.Fatal(err)
	}
	// The write's first transaction takes y, then waits for x.
	var tries atomic.Int32
	holding := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.write(ctx, termBatch{}, func(w *docWriter) error {
			if tries.Add(1) == 1 {
				if _, err := w.tx.ExecContext(ctx, lock, rows[1].key); err != nil {
					return err
				}
				close(holding)
				if _, err := w.tx.ExecContext(ctx, lock, rows[0].key); err != nil {
					return err
				}
			}
			return w.putAll(ctx, rows)
		})
	}()
	<-holding
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the write never waited for the other transaction's row")
		}
	}
	// Now the other transaction wants y: a deadlock. The write, waiting
	// longer, is the one the server aborts.
	if _, err := other.ExecContext(ctx, lock, rows[1].key); err != nil {
		t.Fatalf("the other transaction: %v; want the write aborted", err)
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v; want it run again and stored", err)
	}
	if n := tries.Load(); n != 2 {
		t.Errorf("the write ran %d times; want 2", n)
	}
	for _, want := range second {
		if d, err := s.Get(ctx, want.URL); err != nil || d.Title != want.Title || d.Text != want.Text {
			t.Errorf("%s = %+v, %v; want the second version", want.URL, d, err)
		}
	}
	checkTerms(t, s)
	checkCounts(t, s)
	checkStats(t, s)
}

// openStores opens n Stores on the archive at url, as n processes would.
func openStores(t *testing.T, url string, n int) []*Store {
	t.Helper()
	stores := make([]*Store, n)
	for i := range stores {
		s, err := Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	return stores
}

// Writers adding the same new fact-checks at once (two imports of one
// ClaimReview feed, or a check archiving a fact-check page an import also
// holds), in different orders, on two Stores: every batch is stored and
// each fact-check is one row, as its last writer left it.
func TestPostgresConcurrentClaimReviews(t *testing.T) {
	url := pgdbtest.Fresh(t)
	stores := openStores(t, url, 2)
	ctx := context.Background()
	claims := func(round, writer int) []sources.ClaimReview {
		var crs []sources.ClaimReview
		for i := range 6 {
			crs = append(crs, sources.ClaimReview{Claim: fmt.Sprintf("claim %d of round %d spreads online", i, round),
				Rating: fmt.Sprintf("False by writer %d", writer), Reviewer: "PolitiFact",
				ReviewURL: fmt.Sprintf("https://www.politifact.com/factchecks/%d/%d/", round, i)})
		}
		if writer%2 == 1 {
			slices.Reverse(crs)
		}
		return crs
	}
	const rounds, writers = 20, 4
	var failed atomic.Int32
	for round := range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				if err := stores[w%2].AddClaimReviews(ctx, claims(round, w), "en"); err != nil {
					failed.Add(1)
					t.Errorf("round %d, writer %d: %v", round, w, err)
				}
			})
		}
		close(start)
		wg.Wait()
	}
	if failed.Load() > 0 {
		return
	}
	n, err := stores[0].ClaimCount(ctx)
	if err != nil || n != rounds*6 {
		t.Errorf("ClaimCount = %d, %v; want %d, one row a fact-check", n, err, rounds*6)
	}
	hits, err := stores[1].MatchClaims(ctx, "claim 3 of round 7 spreads online", "en", 1)
	if err != nil || len(hits) != 1 || !strings.HasPrefix(hits[0].Rating, "False by writer") {
		t.Errorf("MatchClaims = %+v, %v", hits, err)
	}
}

// Two writers each rewriting two stored pages in one AddAll of more than
// an import batch, the pages at its two ends and in the opposite order
// (a newsroom tool adding a day's pages while `muse archive add` stores
// the same file): neither waits for the other in a circle, so the
// server aborts nothing (no deadlock, each of which cost
// deadlock_timeout before the retry), and each page is one of the two
// writers' versions, with its postings and counts.
func TestPostgresLargeAddAllsTakeLocksInOrder(t *testing.T) {
	url := pgdbtest.Fresh(t)
	stores := openStores(t, url, 2)
	ctx := context.Background()
	ends := []string{"https://l.example/x", "https://l.example/y"}
	for _, u := range ends {
		if err := stores[0].Add(ctx, Doc{URL: u, Title: "Harbour news", Text: "The harbour opened."}); err != nil {
			t.Fatal(err)
		}
	}
	var retries atomic.Int32
	onConflictRetry = func(err error) {
		retries.Add(1)
		t.Logf("retried: %v", err)
	}
	t.Cleanup(func() { onConflictRetry = nil })
	batch := func(w int) []Doc {
		first, last := ends[0], ends[1]
		if w == 1 {
			first, last = last, first
		}
		docs := []Doc{{URL: first, Title: fmt.Sprintf("Ferry news %d", w), Text: fmt.Sprintf("The ferry sailed, writer %d.", w)}}
		for i := range batchSize + 10 {
			docs = append(docs, Doc{URL: fmt.Sprintf("https://l.example/w%d/%d", w, i),
				Title: fmt.Sprintf("Council page %d", i), Text: fmt.Sprintf("The council met about item %d of writer %d.", i, w)})
		}
		return append(docs, Doc{URL: last, Title: fmt.Sprintf("Storm news %d", w), Text: fmt.Sprintf("The storm passed, writer %d.", w)})
	}
	const rounds = 3
	for round := range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range 2 {
			wg.Go(func() {
				<-start
				if err := stores[w].AddAll(ctx, batch(w)); err != nil {
					t.Errorf("round %d, writer %d: %v", round, w, err)
				}
			})
		}
		close(start)
		wg.Wait()
	}
	if n := retries.Load(); n > 0 {
		t.Errorf("%d writes were aborted and run again; want none: the writers waited on each other in a circle", n)
	}
	for _, u := range ends {
		d, err := stores[1].Get(ctx, u)
		if err != nil || !strings.Contains(d.Text, "writer ") {
			t.Errorf("%s = %+v, %v; want one writer's version", u, d, err)
		}
	}
	checkTerms(t, stores[0])
	checkCounts(t, stores[0])
	checkStats(t, stores[0])
}

// Checks archiving their few pages at once on two Stores, all sharing
// words: their appends to the same terms' rows skip the rows another
// holds, so no write waits in a circle (none is aborted and run again),
// every posting is there once, and a shared word still has few rows.
func TestPostgresConcurrentSmallWrites(t *testing.T) {
	url := pgdbtest.Fresh(t)
	stores := openStores(t, url, 2)
	ctx := context.Background()
	var retries atomic.Int32
	onConflictRetry = func(error) { retries.Add(1) }
	t.Cleanup(func() { onConflictRetry = nil })
	const writers, writes, per = 4, 25, 12
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range writers {
		wg.Go(func() {
			<-start
			for w := range writes {
				var docs []Doc
				for i := range per {
					k := (g*writes+w)*per + i
					docs = append(docs, Doc{URL: fmt.Sprintf("https://c.example/%d", k), Title: "Ferry strike",
						Text: fmt.Sprintf("the ferry strike goes on, day%d, writer%d", k, g)})
				}
				if err := stores[g%2].AddAll(ctx, docs); err != nil {
					t.Errorf("writer %d, write %d: %v", g, w, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if n := retries.Load(); n > 0 {
		t.Errorf("%d writes were aborted and run again; want none", n)
	}
	total := writers * writes * per
	rows := len(rowSizes(t, stores[0], "strike"))
	if most := total/(rowIDs-per+1) + writers; rows > most {
		t.Errorf("a word of all %d pages has %d rows; want at most %d", total, rows, most)
	}
	t.Logf("%d pages in %d writes of %d: the shared word has %d rows", total, writers*writes, per, rows)
	checkTerms(t, stores[0])
	checkCounts(t, stores[0])
	checkStats(t, stores[0])
}
