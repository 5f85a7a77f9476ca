package posts

import (
	"math"
	"strconv"
	"strings"
)

// syndicationToken computes the token the public tweet embed sends to
// cdn.syndication.twimg.com/tweet-result: in JavaScript,
// ((Number(id) / 1e15) * Math.PI).toString(36) with every "0" and "." removed.
// The server checks it, so it must match JavaScript digit for digit.
func syndicationToken(id string) string {
	n, err := strconv.ParseFloat(id, 64)
	if err != nil {
		return ""
	}
	s := jsRadixString(n/1e15*math.Pi, 36)
	return strings.NewReplacer("0", "", ".", "").Replace(s)
}

// jsRadixString is Number.prototype.toString(radix) for a finite,
// non-negative double, following V8's DoubleToRadixCString: fraction
// digits are produced until they no longer distinguish the double from its
// neighbours (delta is half the gap to the next double), rounding the
// last digit half to even.
func jsRadixString(value float64, radix int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	integer := math.Floor(value)
	fraction := value - integer
	delta := 0.5 * (math.Nextafter(value, math.Inf(1)) - value)
	delta = math.Max(math.Nextafter(0, 1), delta)
	var frac []byte
	if fraction >= delta {
		for {
			fraction *= float64(radix)
			delta *= float64(radix)
			d := int(fraction)
			frac = append(frac, digits[d])
			fraction -= float64(d)
			if fraction > 0.5 || (fraction == 0.5 && d&1 == 1) {
				if fraction+delta > 1 {
					// Round up, carrying into earlier digits and at worst
					// into the integer part.
					for {
						if len(frac) == 0 {
							integer++
							break
						}
						last := strings.IndexByte(digits, frac[len(frac)-1])
						frac = frac[:len(frac)-1]
						if last+1 < radix {
							frac = append(frac, digits[last+1])
							break
						}
					}
					break
				}
			}
			if fraction < delta {
				break
			}
		}
	}
	// Integer digits; beyond 2^53 the low digits are not represented and
	// V8 writes zeros for them.
	var intDigits []byte
	for integer/float64(radix) >= 1<<53 {
		integer /= float64(radix)
		intDigits = append(intDigits, '0')
	}
	for {
		rem := math.Mod(integer, float64(radix))
		intDigits = append(intDigits, digits[int(rem)])
		integer = (integer - rem) / float64(radix)
		if integer <= 0 {
			break
		}
	}
	for i, j := 0, len(intDigits)-1; i < j; i, j = i+1, j-1 {
		intDigits[i], intDigits[j] = intDigits[j], intDigits[i]
	}
	if len(frac) == 0 {
		return string(intDigits)
	}
	return string(intDigits) + "." + string(frac)
}
