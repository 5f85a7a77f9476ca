package posts

import (
	"math"
	"testing"
)

// Expected values were computed by Node.js (V8) with the expression the
// public embed uses.
func TestSyndicationToken(t *testing.T) {
	for id, want := range map[string]string{
		"20":                  "6dq1a2xwd93",
		"1255542774432063488": "31kejizo785",
		"1683920951807971329": "42y6zv7ufp",
		"1801210978374242554": "4d6o5ug9gf",
		"463440424141459456":  "14fxvks611f",
	} {
		if got := syndicationToken(id); got != want {
			t.Errorf("token(%s) = %q, want %q", id, got, want)
		}
	}
}

func TestJSRadixString(t *testing.T) {
	// At run time, not as constants: Go folds constant expressions exactly,
	// and the point is to match float64 arithmetic.
	scaled := func(id float64) float64 { return id / 1e15 * math.Pi }
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0.5, "0.i"},
		{35, "z"},
		{36, "10"},
		{scaled(1255542774432063488), "31k.ejizo785"},
		{scaled(1683920951807971329), "42y.6z0v7ufp"},
		{scaled(20), "0.000000006dq1a2xwd93"},
	} {
		if got := jsRadixString(tc.v, 36); got != tc.want {
			t.Errorf("jsRadixString(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
