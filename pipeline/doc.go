// Package pipeline is muse's engine: the Check record and the stages of the
// Muse method (Zhou et al., arXiv 2403.11169) that read and write it, run
// over a Check by Engine.Run from any stage, publishing events as they go.
//
// # Stage map
//
// Every stage has one home in each layer, named after it:
//
//	stage        engine (pipeline/)                      app pane (tui/)      prompt (prompts/)
//	images       stage_images.go                         pane_images.go       image.go
//	queries      stage_queries.go                        pane_queries.go      queries.go
//	search       stage_search.go (both passes)           pane_search.go       —
//	sources      stage_sources.go, relevance.go,         pane_sources.go      —
//	             relevance_image.go
//	evidence     stage_evidence.go, guard.go (quotes)    pane_evidence.go     evidence.go
//	correction   stage_correction.go, guard.go (links)   pane_correction.go   correction.go
//
// The rest of the engine: check.go (the record), edit.go (what the person
// may change in it between runs, which stages each change makes stale,
// and what a stopped run leaves), event.go (stages and events), engine.go
// (Run, events, usage, the spend guard), deps.go (the interfaces through
// which the engine reaches the world), model.go (the Model over
// sources/llm and prompts), pages.go, archived.go and posturl.go (pages
// read, archived and posts by URL), factchecks.go (the post matched
// against imported fact-checks at the start of the search stage).
//
// # Who may import whom
//
// Imports point down only, and TestImportRules enforces it:
//
//	main → cli → tui → pipeline/<dir> → pipeline → prompts → sources/...
//
// In words:
//
//   - sources/... is the outside world (model client, search, fetch,
//     extraction, ratings, archive, posts, images, stores). It imports
//     nothing of muse above it.
//   - prompts imports only sources/... (the model client's message types).
//   - Files directly in pipeline/ are the engine; they import prompts and
//     sources/..., never a folder under pipeline/.
//   - Each folder under pipeline/ uses the engine: setup (configuration →
//     engine, doctor), cases (the case store and recording a run into it),
//     export (every rendering of a Check: Markdown, JSON, note, ClaimReview,
//     progress lines), batch (muse batch), watch (muse watch: feeds
//     triaged and queued), testworld (the loopback world of the end-to-end
//     tests, imported by tests only).
//   - tui imports the engine and the folders under it; nothing imports tui
//     but cli.
//   - cli is the command line: a file per command group with its flags,
//     exit codes and printers; it opens the app (tui) or runs the engine
//     headless. main only calls cli.Main.
package pipeline
