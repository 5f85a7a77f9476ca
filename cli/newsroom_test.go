package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// TestNewsroomRoles: on the real PostgreSQL, the database's owner sets up
// the roles and grants them; two checkers and an editor then work through
// the binary as their own logins. The checker is who the login is (not
// MUSE_USER); a checker reads and exports a colleague's case but neither
// changes nor deletes it (muse refuses, saying why, and the database
// refuses what muse is bypassed for); an editor deletes it; nobody, the
// owner included, changes or removes a line of the audit trail.
func TestNewsroomRoles(t *testing.T) {
	owner := pgdbtest.Fresh(t)
	isolate(t)
	ctx := context.Background()
	var b [4]byte
	rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	logins := map[string]string{} // name → URL
	admin, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, who := range []string{"alice", "bob", "ed"} {
		name := who + "_" + suffix
		if _, err := admin.Exec(ctx, "CREATE ROLE "+name+" LOGIN PASSWORD 'pw-"+suffix+"'"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c, err := pgx.Connect(context.Background(), owner)
			if err == nil {
				c.Exec(context.Background(), "DROP ROLE IF EXISTS "+name)
				c.Close(context.Background())
			}
		})
		u, _ := url.Parse(owner)
		u.User = url.UserPassword(name, "pw-"+suffix)
		logins[who] = u.String()
	}
	w := testworld.New(t, nil)
	world := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	as := func(who string, extra ...string) []string {
		u := owner
		if who != "owner" {
			u = logins[who]
		}
		return append(append(append([]string{}, world...), "MUSE_DATABASE_URL="+u), extra...)
	}
	must := func(who string, args ...string) string {
		t.Helper()
		out, errOut, code := muse(t, "", as(who), args...)
		if code != 0 {
			t.Fatalf("%s: muse %q: exit %d\n%s%s", who, args, code, out, errOut)
		}
		return out
	}
	refused := func(who string, env []string, want string, args ...string) {
		t.Helper()
		out, errOut, code := muse(t, "", env, args...)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("%s: muse %q: exit %d, want a refusal saying %q\n%s%s", who, args, code, want, out, errOut)
		}
	}

	// Before init, a grant says what to do first.
	refused("owner", as("owner"), "muse newsroom init", "newsroom", "grant", "alice_"+suffix, "checker")
	must("owner", "newsroom", "init")
	must("owner", "newsroom", "init") // again, after an upgrade: nothing breaks
	must("owner", "newsroom", "grant", "alice_"+suffix, "checker")
	must("owner", "newsroom", "grant", "bob_"+suffix, "checker")
	must("owner", "newsroom", "grant", "ed_"+suffix, "editor")
	refused("owner", as("owner"), "not a role", "newsroom", "grant", "bob_"+suffix, "boss")
	refused("owner", as("owner"), "no login", "newsroom", "grant", "nobody_"+suffix, "checker")
	var members []cases.Member
	if err := json.Unmarshal([]byte(must("owner", "newsroom", "who", "--json")), &members); err != nil || len(members) != 3 {
		t.Fatalf("who: %+v %v", members, err)
	}
	// A checker cannot grant.
	refused("bob", as("bob"), "grant", "newsroom", "grant", "bob_"+suffix, "editor")

	// Alice checks a post: the case is hers, by her login.
	var c pipeline.Check
	out := must("alice", "check", "--json", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if err := json.Unmarshal([]byte(out), &c); err != nil || c.ID == "" {
		t.Fatalf("alice's check: %v\n%s", err, out)
	}
	// Bob cannot act as Alice.
	refused("bob", as("bob", "MUSE_USER=alice_"+suffix), "your database login", "cases", "--json")
	// Bob reads and exports her case; he cannot delete it.
	if md := must("bob", "cases", "export", c.ID, "--format", "md"); !strings.Contains(md, "# Correction") {
		t.Errorf("bob's export:\n%s", md)
	}
	refused("bob", as("bob"), "an editor's", "cases", "rm", c.ID)
	// Nor change it, through muse…
	st, err := cases.OpenOptions(ctx, cases.Options{Path: logins["bob"]})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.Correction.Text = "Bob's words in Alice's case."
	if err := st.Save(ctx, got); !errors.Is(err, cases.ErrNotYours) || !strings.Contains(err.Error(), "alice_"+suffix) {
		t.Errorf("bob's save of alice's case: %v", err)
	}
	if err := st.SaveDraft(ctx, c.ID, "Bob's draft", true); !errors.Is(err, cases.ErrNotYours) {
		t.Errorf("bob's draft in alice's case: %v", err)
	}
	st.Close()
	// …or around it: the database holds the rules.
	bob, err := pgx.Connect(ctx, logins["bob"])
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close(ctx)
	if tag, err := bob.Exec(ctx, "UPDATE cases SET correction_line = 'bob' WHERE id = $1", c.ID); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("bob's UPDATE of alice's case: %v rows, %v", tag.RowsAffected(), err)
	}
	if tag, err := bob.Exec(ctx, "DELETE FROM cases WHERE id = $1", c.ID); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("bob's DELETE of alice's case: %v rows, %v", tag.RowsAffected(), err)
	}
	if _, err := bob.Exec(ctx, "INSERT INTO cases (id, created_at, updated_at, check_json, created_by, updated_by) VALUES ('forged', 0, 0, '\\x7b7d', $1, $1)", "alice_"+suffix); err == nil {
		t.Error("bob created a case in alice's name")
	}
	if _, err := bob.Exec(ctx, "INSERT INTO audit (case_id, at, actor, action) VALUES ($1, 0, $2, 'deleted')", c.ID, "alice_"+suffix); err == nil {
		t.Error("bob wrote a trail line in alice's name")
	}
	for _, q := range []string{"DELETE FROM audit", "UPDATE audit SET actor = 'x'", "TRUNCATE audit"} {
		if _, err := bob.Exec(ctx, q); err == nil {
			t.Errorf("bob: %s was allowed", q)
		}
		if _, err := admin.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("the owner: %s: %v, want the append-only refusal", q, err)
		}
	}

	// The editor deletes it; the trail says who read, exported and deleted.
	if out := must("ed", "cases", "rm", c.ID); !strings.Contains(out, "removed case") {
		t.Errorf("ed's rm: %s", out)
	}
	trail := must("owner", "cases", "log", c.ID)
	for _, want := range []string{"alice_" + suffix, "bob_" + suffix + "  exported", "ed_" + suffix + "  deleted"} {
		if !strings.Contains(strings.Join(strings.Fields(trail), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("the trail lacks %q:\n%s", want, trail)
		}
	}
}
