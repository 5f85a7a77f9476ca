// Command muse helps journalists correct misleading social-media posts, the
// way the Muse system does (Zhou, Sharma, Zhang, Althoff, arXiv 2403.11169):
// it searches credible publishers, reads their pages, quotes the evidence and
// writes a short correction, with a person in the loop at every stage.
//
// `muse` opens the terminal app; the subcommands run the same engine
// headless. The commands live in package cli.
package main

import (
	"os"

	"github.com/musecheck/muse/cli"
)

func main() {
	os.Exit(cli.Main())
}
