// Package eval measures corrections the way the Muse paper's experts did
// (Zhou et al., arXiv 2403.11169), and compares systems on a set of posts:
// `muse eval` and `muse eval calibrate`.
//
// A system writes a correction for each post: muse with a configuration
// (System over the engine, its cutoff at the post's own time), the model
// alone with no retrieval (the paper's GPT-4 baseline), or corrections
// given with the posts (people's notes, another tool's output). Each
// correction is scored by deterministic measures (Measure: links valid by
// X's pattern and reachable now through the safe fetcher, publisher tiers,
// evidence pages, note length, language, quotes found on the cited pages)
// and, when a judge model is configured, on the paper's 13 criteria and
// overall quality (Judge, prompts.Judge). Summarise turns the results into
// per-system means with bootstrap intervals and paired tests, rendered as
// text, JSON or one self-contained HTML page.
package eval
