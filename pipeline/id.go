package pipeline

import (
	"crypto/rand"
	"crypto/sha256"
	"time"
)

// idAlphabet is Crockford's base32 in lower case: no i, l, o or u.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns a new Check ID, the one scheme every check and case uses
// (Engine.NewCheck gives each new Check one): NewIDAt the current time.
func NewID() string { return NewIDAt(time.Now()) }

// NewIDAt returns a new Check ID made at t: 9 characters of t in
// milliseconds then 7 random ones, all lower-case Crockford base32, so IDs
// sort by creation time, are safe in file names and URLs, and can be typed
// by a unique prefix. 35 random bits make a clash between IDs made in the
// same millisecond a 1 in 34 billion event per pair.
func NewIDAt(t time.Time) string {
	var r [7]byte
	rand.Read(r[:]) // crypto/rand.Read never fails (Go 1.24+)
	return idOf(t, r[:])
}

// IDFor is the Check ID of something made at t and named by seed (a queued
// job's number and key): of NewID's form, and the same every time it is
// asked for the same t and seed.
func IDFor(t time.Time, seed []byte) string {
	sum := sha256.Sum256(seed)
	return idOf(t, sum[:7])
}

// idOf writes t's milliseconds and the low 5 bits of each of the 7 bytes
// of tail in idAlphabet.
func idOf(t time.Time, tail []byte) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 8; i >= 0; i-- {
		b[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	for i, x := range tail[:7] {
		b[9+i] = idAlphabet[x&31]
	}
	return string(b[:])
}
