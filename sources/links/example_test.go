package links_test

import (
	"fmt"

	"github.com/musecheck/muse/sources/links"
)

func ExampleRemove() {
	evidence := map[string]bool{"https://www.reuters.com/world/a": true}
	text := "This post is false (https://www.reuters.com/world/a). More at HTTPS://evil-proof.com/x. " +
		"See also [this analysis][1].\n\n[1]: //evil-proof.com/y"
	clean, removed := links.Remove(text, func(u string) bool { return evidence[u] })
	fmt.Println(clean)
	fmt.Println(removed)
	// Output:
	// This post is false (https://www.reuters.com/world/a). See also this analysis.
	// [https://evil-proof.com/x https://evil-proof.com/y]
}
