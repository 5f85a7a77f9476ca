package feeds

import (
	"cmp"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Status IDs are opaque strings to Mastodon's API: a client hands back
// the ones it read (since_id, min_id, max_id) and the server compares
// them the way it orders its statuses. The servers muse reads order them
// by time, and write them so that the order shows in the string:
//
//   - Mastodon: a decimal snowflake, the milliseconds since 1970 shifted
//     left by 16 bits (statuses from before 2017 have small serial IDs);
//     a longer number is a greater one.
//   - GoToSocial: a ULID, 26 characters of Crockford's base 32, the first
//     ten the milliseconds since 1970.
//   - Pleroma and Akkoma: a FlakeId, a 128-bit number (64 bits of
//     milliseconds since 1970, a 48-bit worker, a 16-bit sequence) in base
//     62 with the digits 0-9A-Za-z, 18 characters.
//
// So compareIDs orders two IDs by length, then by their bytes: numeric
// order for decimal snowflakes, and the strings' order for ULIDs and
// FlakeIds of equal length. The time an ID holds gives the start of the
// lookback window before the cursor.

// compareIDs orders two status IDs as their server does.
func compareIDs(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// flakeDigits are FlakeId's base-62 digits, in order.
const flakeDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// flakeLen is the length of a FlakeId of any time since 1970-01-13 (a
// shorter string is no FlakeId to a Pleroma server).
const flakeLen = 18

// parseFlake reads a FlakeId as its number; false when s is not one.
func parseFlake(s string) (*big.Int, bool) {
	if len(s) != flakeLen {
		return nil, false
	}
	n, d := new(big.Int), new(big.Int)
	base := big.NewInt(62)
	for i := range len(s) {
		v := strings.IndexByte(flakeDigits, s[i])
		if v < 0 {
			return nil, false
		}
		n.Mul(n, base).Add(n, d.SetInt64(int64(v)))
	}
	if n.BitLen() > 128 {
		return nil, false
	}
	return n, true
}

// formatFlake writes n as a FlakeId, padded with zeros to flakeLen.
func formatFlake(n *big.Int) string {
	var b []byte
	base, m, r := big.NewInt(62), new(big.Int).Set(n), new(big.Int)
	for m.Sign() > 0 {
		m.QuoRem(m, base, r)
		b = append(b, flakeDigits[r.Int64()])
	}
	for len(b) < flakeLen {
		b = append(b, '0')
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// plausible says whether ms, the time an ID holds, is one a status of
// today could hold (from 2016, when these servers began, to a day ahead):
// a string that only looks like a ULID or a FlakeId is not taken for one.
func plausible(ms uint64) bool {
	return ms >= uint64(time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()) &&
		ms <= uint64(time.Now().Add(24*time.Hour).UnixMilli())
}

// lookbackStart is the lowest ID of the kind of id that a status posted
// lookback before it would have: where the window of late statuses
// starts. ok is false when the ID holds no time muse can read (nor a
// snowflake's serial number): then there is no window.
func lookbackStart(id string, lookback time.Duration) (start string, ok bool) {
	back := uint64(lookback.Milliseconds())
	if n, err := strconv.ParseUint(id, 10, 64); err == nil {
		// A snowflake, or an old serial ID (the window is then all of them).
		if w := back << 16; n > w {
			return strconv.FormatUint(n-w, 10), true
		}
		return "0", true
	}
	if u, err := ulid.ParseStrict(id); err == nil && plausible(u.Time()) {
		var low ulid.ULID
		_ = low.SetTime(u.Time() - min(back, u.Time())) // within ULID's 48 bits: it is below u's time
		return low.String(), true
	}
	if n, ok := parseFlake(id); ok {
		ms := new(big.Int).Rsh(n, 64).Uint64()
		if plausible(ms) {
			low := new(big.Int).Lsh(new(big.Int).SetUint64(ms-min(back, ms)), 64)
			return formatFlake(low), true
		}
	}
	return "", false
}
