// Package initgc keeps the garbage collector from running while muse's
// packages initialise, and lets it run normally once main starts.
//
// Go runs the init of every linked package before main, and muse's
// libraries build about 22 MB of tables there (go-dateparser's locale data,
// chroma's lexer and style registries for glamour's code blocks). With the
// collector's first goal at 4 MB that is five collections, about a quarter
// of `muse --version`'s time on a 2-core machine. No API sets the collector's
// percentage before the packages' init (runtime/debug comes ready only after
// most of them), so this package, which imports nothing and is therefore
// initialised among the first, allocates a ballast: one collection at once
// (of an almost empty heap), after which the goal is twice the ballast and
// the inits fit below it. The ballast is never written, so the kernel gives
// it no memory; main drops it with Resume, and the next collection, at most
// one ballast's worth of allocation later than it would otherwise come,
// sets the goal from what is really live.
package initgc

// ballastSize exceeds what the inits allocate (about 22 MB, GODEBUG=
// inittrace=1) with room to spare: the goal after the first collection is
// twice the ballast, so the inits add less than one ballast.
const ballastSize = 32 << 20

var ballast = make([]byte, ballastSize)

// Resume drops the ballast: the collector's goals are again set by the live
// heap alone from its next collection on. Calling it again does nothing.
func Resume() { ballast = nil }
