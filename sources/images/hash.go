package images

import (
	"fmt"
	"image"
	"math/bits"

	"github.com/corona10/goimagehash"
)

// MatchThreshold is the Similarity at or above which a page's image is
// taken to show the same picture as a post image. The paper keeps a page
// whose image similarity reaches 0.7; here similarity is measured by
// perceptual hash rather than the paper's image embeddings, and 0.7 means
// at most 19 of the 64 pHash bits differ. In this package's tests JPEG
// re-encoding and resizing keep ≥ 0.96 and trimming 4% off every side
// keeps 0.84, while different pictures score 0.4–0.6 (unrelated images
// average 0.5). Heavy crops, mirrored images and screenshots of a photo
// inside a larger page fall below it: pHash compares whole pictures.
const MatchThreshold = 0.7

// pHash is goimagehash's perceptual hash: the image scaled to 64×64 grey,
// its 8×8 lowest DCT frequencies each compared with their median.
func pHash(img image.Image) (uint64, error) {
	h, err := goimagehash.PerceptionHash(img)
	if err != nil {
		return 0, fmt.Errorf("perceptual hash: %w", err)
	}
	return h.GetHash(), nil
}

// Distance is the number of the 64 pHash bits in which a and b differ.
func Distance(a, b uint64) int {
	return bits.OnesCount64(a ^ b)
}

// Similarity is 1 − Distance/64, in [0, 1]: 1 for the same picture, about
// 0.5 for unrelated ones. Compare it with MatchThreshold.
func Similarity(a, b uint64) float64 {
	return 1 - float64(Distance(a, b))/64
}

// Similarity compares i with another image by perceptual hash.
func (i *Image) Similarity(o *Image) float64 {
	return Similarity(i.Hash, o.Hash)
}
