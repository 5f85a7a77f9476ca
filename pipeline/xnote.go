package pipeline

import (
	"maps"
	"slices"
	"time"
)

// XNote is what X's AI Note Writer API said of the case's post and note:
// the note requests' suggestions and suggested sources of an eligible
// post, the ClaimOpinion score of the note evaluated, and the note
// submitted with its status and evaluator scores (`muse notes status`).
// Kept in the case across reruns; only X's answers are written here.
type XNote struct {
	PostID string `json:"post_id"`
	// Requests are the note requests' suggestions X gave with the post.
	Requests []XNoteRequest `json:"requests,omitempty"`
	// Sources are the links the people asking for a note suggested.
	Sources []XSuggestedSource `json:"suggested_sources,omitempty"`
	// ClaimOpinion is evaluate_note's score of EvaluatedText.
	ClaimOpinion  *float64  `json:"claim_opinion,omitempty"`
	EvaluatedText string    `json:"evaluated_text,omitempty"`
	EvaluatedAt   time.Time `json:"evaluated_at,omitzero"`
	// NoteID is the note submitted, in test mode unless Live.
	NoteID        string    `json:"note_id,omitempty"`
	Live          bool      `json:"live,omitempty"`
	SubmittedText string    `json:"submitted_text,omitempty"`
	SubmittedAt   time.Time `json:"submitted_at,omitzero"`
	SubmittedBy   string    `json:"submitted_by,omitempty"`
	// Status and Scores are notes_written's: the rating status and the
	// evaluator's buckets (ClaimOpinion, UrlValidity, HarassmentAbuse).
	Status   string            `json:"status,omitempty"`
	Scores   map[string]string `json:"scores,omitempty"`
	StatusAt time.Time         `json:"status_at,omitzero"`
}

// XNoteRequest is one note request's suggestion.
type XNoteRequest struct {
	Suggestion string `json:"suggestion,omitempty"`
	SourceLink string `json:"source_link,omitempty"`
}

// XSuggestedSource is a suggested source link and how many suggested it.
type XSuggestedSource struct {
	URL   string `json:"url"`
	Count int    `json:"count,omitempty"`
}

func (x *XNote) clone() *XNote {
	if x == nil {
		return nil
	}
	d := *x
	d.Requests = slices.Clone(x.Requests)
	d.Sources = slices.Clone(x.Sources)
	if x.ClaimOpinion != nil {
		v := *x.ClaimOpinion
		d.ClaimOpinion = &v
	}
	d.Scores = maps.Clone(x.Scores)
	return &d
}
