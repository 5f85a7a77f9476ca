package sanitize_test

import (
	"fmt"
	"os"

	"github.com/musecheck/muse/sources/sanitize"
)

func ExampleString() {
	page := "Officials\x1b]0;pwned\x07 said\x1b]52;c;cm0gLXJmIH4=\x07 the photo\x1b[2J is from 2012.\r\n"
	fmt.Printf("%q\n", sanitize.String(page))
	// Output:
	// "Officials said the photo is from 2012.\n"
}

func ExampleWriter() {
	w := sanitize.NewWriter(os.Stdout)
	w.Write([]byte("streamed \x1b]0;ti")) // a sequence split across writes
	w.Write([]byte("tle\x07words\n"))
	w.Flush()
	// Output:
	// streamed words
}
