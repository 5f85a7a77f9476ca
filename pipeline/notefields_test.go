package pipeline

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNoteFields: the classification and tags follow the verdict of each
// claim and the stances of its quotes; no note is derived without a
// refuting or context page.
func TestNoteFields(t *testing.T) {
	src := func(host string) Source {
		return Source{URL: "https://" + host + "/a", Domain: host, Publisher: host, PublisherRated: true, Tier: TierHigh, Status: StatusUsed, Paragraphs: []string{"x"}}
	}
	q := func(host string, k Kind, claim int) Evidence {
		return Evidence{SourceURL: "https://" + host + "/a", Quote: "q " + host, Kind: k, Claim: claim, Verified: true, Included: true}
	}
	for _, tc := range []struct {
		name     string
		claims   []Claim
		ev       []Evidence
		checker  Verdict
		class    string
		tags     []string
		reason   string // in the first tag's reason
		abstains bool
	}{
		{"refuted", nil, []Evidence{q("a.example", KindRefutes, 0)}, "", ClassMisleading, []string{TagFactualError}, "refuted by a.example", false},
		{"context", nil, []Evidence{q("a.example", KindContext, 0)}, "", ClassMisleading, []string{TagMissingImportantContext}, "context that a.example give", false},
		{"conflicting", nil, []Evidence{q("a.example", KindSupports, 0), q("b.example", KindRefutes, 0)}, "", ClassMisleading,
			[]string{TagDisputedClaimAsFact}, "a.example confirm it and b.example dispute it", false},
		{"supported", nil, []Evidence{q("a.example", KindSupports, 0)}, "", ClassNotMisleading, nil, "", false},
		{"no evidence", nil, nil, "", "", nil, "", true},
		{"two claims, one refuted", []Claim{{Text: "one"}, {Text: "two"}},
			[]Evidence{q("a.example", KindSupports, 1), q("b.example", KindRefutes, 2)}, "", ClassMisleading, []string{TagFactualError}, "claim 2 is refuted by b.example", false},
		{"confirmed by a stale page, refuted by a newer one", nil, []Evidence{q("old.example", KindSupports, 0), q("b.example", KindRefutes, 0)}, "", ClassMisleading,
			[]string{TagDisputedClaimAsFact, TagOutdatedInformation}, "", false},
		{"refuted by the checker with only a confirming page", nil, []Evidence{q("a.example", KindSupports, 0)}, VerdictRefuted,
			ClassMisleading, []string{TagFactualError}, "checker", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := src("old.example")
			old.Published = time.Date(2021, 5, 1, 0, 0, 0, 0, time.UTC)
			newer := src("b.example")
			newer.Published = time.Date(2024, 2, 20, 0, 0, 0, 0, time.UTC)
			c := &Check{Post: Post{Text: "p", PostedAt: time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)}, Claims: tc.claims, Evidence: tc.ev, CheckerVerdict: tc.checker,
				Sources: []Source{src("a.example"), newer, old}}
			f := c.NoteFields()
			if f.Classification != tc.class || !slices.Equal(f.TagNames(), tc.tags) {
				t.Fatalf("got %q %v, want %q %v", f.Classification, f.TagNames(), tc.class, tc.tags)
			}
			if slices.Contains(tc.tags, TagOutdatedInformation) && !strings.Contains(f.Tags[1].Reason, "the post was confirmed by old.example, published a year or more before the post, and b.example") {
				t.Errorf("outdated reason: %q", f.Tags[1].Reason)
			}
			if tc.reason != "" && !strings.Contains(f.Tags[0].Reason, tc.reason) {
				t.Errorf("reason %q does not say %q", f.Tags[0].Reason, tc.reason)
			}
			if (f.Abstain != "") != tc.abstains {
				t.Errorf("abstain %q, want abstention %v", f.Abstain, tc.abstains)
			}
		})
	}
}

// TestNoteChoice: the person's classification and tags replace the derived
// ones, keep a derived tag's reason, survive a JSON round trip and Clone,
// and are refused when X would refuse them.
func TestNoteChoice(t *testing.T) {
	c := &Check{Post: Post{Text: "p"},
		Sources:  []Source{{URL: "https://a.example/a", Domain: "a.example", Tier: TierHigh, Status: StatusUsed, Paragraphs: []string{"x"}}},
		Evidence: []Evidence{{SourceURL: "https://a.example/a", Quote: "q", Kind: KindRefutes, Verified: true, Included: true}}}
	if err := c.SetNoteChoice(ClassMisleading, nil); err == nil {
		t.Error("a misleading note without tags was accepted")
	}
	if err := c.SetNoteChoice(ClassMisleading, []string{"fake_news"}); err == nil {
		t.Error("an unknown tag was accepted")
	}
	if err := c.SetNoteChoice(ClassNotMisleading, []string{TagOther}); err == nil {
		t.Error("a tag on a note that is not misleading was accepted")
	}
	if err := c.SetNoteChoice(ClassMisleading, []string{TagOutdatedInformation, TagFactualError}); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var d Check
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	cl := d.Clone()
	cl.CheckerNote.Tags[0] = TagOther
	f := d.NoteFields()
	if f.By != VerdictByChecker || !slices.Equal(f.TagNames(), []string{TagOutdatedInformation, TagFactualError}) {
		t.Fatalf("after a round trip: %+v", f)
	}
	if f.Tags[0].Reason != "chosen by the checker" || !strings.Contains(f.Tags[1].Reason, "refuted by") {
		t.Errorf("reasons: %+v", f.Tags)
	}
	if got := f.Short(); got != "misleading · outdated_information · factual_error" {
		t.Errorf("Short() = %q", got)
	}
	if err := d.SetNoteChoice("", nil); err != nil || d.NoteFields().By != VerdictByEvidence {
		t.Errorf("clearing the choice: %v %+v", err, d.NoteFields())
	}
}
