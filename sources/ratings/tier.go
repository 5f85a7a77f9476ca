package ratings

import (
	"fmt"
	"strings"
)

// Tier is a publisher's priority as a reference, following the Muse paper
// (DESIGN.md): pages from high-tier publishers are read first, excluded ones
// never, and unrated ones (nobody rated the publisher) after low.
type Tier string

// The tiers, in priority order.
const (
	TierHigh     Tier = "high"
	TierMedium   Tier = "medium"
	TierLow      Tier = "low"
	TierUnrated  Tier = "unrated"
	TierExcluded Tier = "excluded"
)

// Rank orders tiers for sorting: 0 for high up to 4 for excluded; an
// unknown tier sorts with excluded.
func (t Tier) Rank() int {
	switch t {
	case TierHigh:
		return 0
	case TierMedium:
		return 1
	case TierLow:
		return 2
	case TierUnrated:
		return 3
	}
	return 4
}

// Usable reports whether pages of this tier may be cited (every tier but
// excluded; unrated ones come last).
func (t Tier) Usable() bool { return t.Rank() < 4 }

// Factuality values, MBFC's "Factual Reporting" scale in display form.
const (
	FactualityVeryHigh      = "very high"
	FactualityHigh          = "high"
	FactualityMostlyFactual = "mostly factual"
	FactualityMixed         = "mixed"
	FactualityLow           = "low"
	FactualityVeryLow       = "very low"
)

// Bias values in display form. MBFC's "center" is "least biased" and its
// "fake-news" code (the "questionable source" category) is "questionable".
const (
	BiasLeastBiased  = "least biased"
	BiasLeftCenter   = "left-center"
	BiasRightCenter  = "right-center"
	BiasLeft         = "left"
	BiasRight        = "right"
	BiasProScience   = "pro-science"
	BiasConspiracy   = "conspiracy-pseudoscience"
	BiasQuestionable = "questionable"
	BiasSatire       = "satire"
)

// factualityNames maps every accepted spelling (already lower-cased, with
// '-' and '_' turned into spaces) to the display form.
var factualityNames = map[string]string{
	"very high": FactualityVeryHigh, "vh": FactualityVeryHigh,
	"high": FactualityHigh, "h": FactualityHigh,
	"mostly factual": FactualityMostlyFactual, "mf": FactualityMostlyFactual,
	"mixed": FactualityMixed, "m": FactualityMixed,
	"low": FactualityLow, "l": FactualityLow,
	"very low": FactualityVeryLow, "vl": FactualityVeryLow,
}

var biasNames = map[string]string{
	"least biased": BiasLeastBiased, "center": BiasLeastBiased, "centre": BiasLeastBiased, "c": BiasLeastBiased,
	"left center": BiasLeftCenter, "left centre": BiasLeftCenter, "lc": BiasLeftCenter,
	"right center": BiasRightCenter, "right centre": BiasRightCenter, "rc": BiasRightCenter,
	"left": BiasLeft, "l": BiasLeft,
	"right": BiasRight, "r": BiasRight,
	"pro science": BiasProScience, "ps": BiasProScience,
	"conspiracy pseudoscience": BiasConspiracy, "conspiracy": BiasConspiracy, "cp": BiasConspiracy,
	"questionable": BiasQuestionable, "fake news": BiasQuestionable, "fn": BiasQuestionable,
	"satire": BiasSatire, "s": BiasSatire,
}

func vocabKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer("-", " ", "_", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// NormalizeFactuality turns a factuality label in any accepted spelling
// ("very-high", "Very High", "VH", …) into its display form. The empty
// string stays empty (not rated).
func NormalizeFactuality(s string) (string, error) {
	k := vocabKey(s)
	if k == "" {
		return "", nil
	}
	if v, ok := factualityNames[k]; ok {
		return v, nil
	}
	return "", fmt.Errorf("unknown factuality %q (want very high, high, mostly factual, mixed, low or very low)", s)
}

// NormalizeBias turns a bias label in any accepted spelling ("center",
// "left-center", "fake-news", …) into its display form. The empty string
// stays empty (not rated).
func NormalizeBias(s string) (string, error) {
	k := vocabKey(s)
	if k == "" {
		return "", nil
	}
	if v, ok := biasNames[k]; ok {
		return v, nil
	}
	return "", fmt.Errorf("unknown bias %q (want least biased, left-center, right-center, left, right, pro-science, conspiracy-pseudoscience, questionable or satire)", s)
}

// TierFor applies the paper's rule (DESIGN.md) to a normalized rating: the
// bias must be least biased, left-center, right-center or pro-science; then
// very high factuality with least-biased or pro-science bias is high, very
// high or high factuality is medium, mostly factual is low, and anything
// else is excluded. A rating with neither value is unrated.
func TierFor(factuality, bias string) Tier {
	if factuality == "" && bias == "" {
		return TierUnrated
	}
	switch bias {
	case BiasLeastBiased, BiasLeftCenter, BiasRightCenter, BiasProScience:
	default:
		return TierExcluded
	}
	switch factuality {
	case FactualityVeryHigh:
		if bias == BiasLeastBiased || bias == BiasProScience {
			return TierHigh
		}
		return TierMedium
	case FactualityHigh:
		return TierMedium
	case FactualityMostlyFactual:
		return TierLow
	}
	return TierExcluded
}
