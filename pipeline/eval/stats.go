package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a mean with its bootstrap confidence interval.
type Interval struct {
	Mean float64 `json:"mean"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	N    int     `json:"n"`
}

// BootstrapMean is xs's mean with a percentile bootstrap interval at level
// (0.95 for 95%) from resamples draws of a generator seeded with seed, so
// the same data gives the same interval.
func BootstrapMean(xs []float64, level float64, resamples int, seed uint64) Interval {
	if len(xs) == 0 {
		return Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	iv := Interval{Mean: stat.Mean(xs, nil), N: len(xs)}
	r := rand.New(rand.NewPCG(seed, 0x6d757365))
	means := make([]float64, resamples)
	for i := range means {
		s := 0.0
		for range xs {
			s += xs[r.IntN(len(xs))]
		}
		means[i] = s / float64(len(xs))
	}
	sort.Float64s(means)
	a := (1 - level) / 2
	iv.Low = stat.Quantile(a, stat.Empirical, means, nil)
	iv.High = stat.Quantile(1-a, stat.Empirical, means, nil)
	return iv
}

// Ranks are xs's ranks from 1, ties given their average rank (scipy's
// rankdata, method "average").
func Ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// tieTerm is Σ(t³−t) over the groups of tied values of sorted ranks.
func tieTerm(ranks []float64) (sum float64, ties bool) {
	s := slices.Clone(ranks)
	sort.Float64s(s)
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[i] {
			j++
		}
		if t := float64(j - i + 1); t > 1 {
			sum += t*t*t - t
			ties = true
		}
		i = j + 1
	}
	return sum, ties
}

var normal = distuv.UnitNormal

// TestResult is a two-sided test: its statistic and p-value, and whether
// the p-value is exact or from the normal approximation.
type TestResult struct {
	Statistic float64 `json:"statistic"`
	P         float64 `json:"p"`
	Exact     bool    `json:"exact"`
	N         int     `json:"n"`
}

// MannWhitneyU is the two-sided Mann-Whitney U test of x against y, as
// scipy.stats.mannwhitneyu with method "auto": U is x's statistic; the
// p-value is exact when both samples have at most 8 values and no ties,
// otherwise from the normal approximation with tie and continuity
// correction.
func MannWhitneyU(x, y []float64) TestResult {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return TestResult{Statistic: math.NaN(), P: math.NaN()}
	}
	all := append(slices.Clone(x), y...)
	r := Ranks(all)
	r1 := 0.0
	for i := range n1 {
		r1 += r[i]
	}
	u1 := r1 - float64(n1*(n1+1))/2
	ties, hasTies := tieTerm(r)
	res := TestResult{Statistic: u1, N: n1 + n2}
	if n1 <= 8 && n2 <= 8 && !hasTies {
		res.Exact = true
		u := math.Max(u1, float64(n1*n2)-u1)
		res.P = math.Min(1, 2*mwuSurvival(n1, n2, int(math.Round(u))))
		return res
	}
	res.P = mwuAsymptotic(n1, n2, u1, ties)
	return res
}

// mwuAsymptotic is the normal approximation's two-sided p-value of U = u1,
// with tie (ties = Σ(t³−t)) and continuity correction.
func mwuAsymptotic(n1, n2 int, u1, ties float64) float64 {
	u := math.Max(u1, float64(n1*n2)-u1)
	mu := float64(n1*n2) / 2
	n := float64(n1 + n2)
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (u - mu - 0.5) / sigma
	return math.Min(1, 2*normal.Survival(z))
}

// mwuSurvival is P(U ≥ u) under the null, counting the arrangements of n1
// and n2 values by their U.
func mwuSurvival(n1, n2, u int) float64 {
	// f[i][j][k]: arrangements of i x's and j y's with U = k.
	maxU := n1 * n2
	f := make([][][]float64, n1+1)
	for i := range f {
		f[i] = make([][]float64, n2+1)
		for j := range f[i] {
			f[i][j] = make([]float64, maxU+1)
		}
	}
	for j := 0; j <= n2; j++ {
		f[0][j][0] = 1
	}
	for i := 1; i <= n1; i++ {
		f[i][0][0] = 1
		for j := 1; j <= n2; j++ {
			for k := 0; k <= i*j; k++ {
				// the largest value is an x (it beats j y's) or a y.
				if k >= j {
					f[i][j][k] += f[i-1][j][k-j]
				}
				f[i][j][k] += f[i][j-1][k]
			}
		}
	}
	total, tail := 0.0, 0.0
	for k, c := range f[n1][n2] {
		total += c
		if k >= u {
			tail += c
		}
	}
	return tail / total
}

// Wilcoxon is the two-sided Wilcoxon signed-rank test of the paired
// differences x[i]−y[i], as scipy.stats.wilcoxon with its defaults
// (zero_method "wilcox": zero differences dropped; no continuity
// correction): the statistic is the smaller of the positive and negative
// rank sums; the p-value is exact when at most 50 differences remain and
// none tie, otherwise from the normal approximation with tie correction.
func Wilcoxon(x, y []float64) TestResult {
	var d []float64
	for i := range x {
		if v := x[i] - y[i]; v != 0 {
			d = append(d, v)
		}
	}
	n := len(d)
	if n == 0 {
		return TestResult{Statistic: math.NaN(), P: math.NaN()}
	}
	abs := make([]float64, n)
	for i, v := range d {
		abs[i] = math.Abs(v)
	}
	r := Ranks(abs)
	plus, minus := 0.0, 0.0
	for i, v := range d {
		if v > 0 {
			plus += r[i]
		} else {
			minus += r[i]
		}
	}
	t := math.Min(plus, minus)
	ties, hasTies := tieTerm(r)
	res := TestResult{Statistic: t, N: n}
	if n <= 50 && !hasTies {
		res.Exact = true
		res.P = math.Min(1, 2*signedRankCDF(n, int(t)))
		return res
	}
	fn := float64(n)
	mu := fn * (fn + 1) / 4
	se := math.Sqrt(fn*(fn+1)*(2*fn+1)/24 - ties/48)
	if se == 0 {
		res.P = 1
		return res
	}
	z := (t - mu) / se
	res.P = math.Min(1, 2*normal.CDF(z))
	return res
}

// signedRankCDF is P(T ≤ t) for the signed-rank statistic of n untied
// differences: the share of the 2ⁿ sign patterns whose positive ranks sum
// to at most t.
func signedRankCDF(n, t int) float64 {
	maxS := n * (n + 1) / 2
	c := make([]float64, maxS+1)
	c[0] = 1
	for k := 1; k <= n; k++ {
		for s := maxS; s >= k; s-- {
			c[s] += c[s-k]
		}
	}
	le := 0.0
	for s := 0; s <= t && s <= maxS; s++ {
		le += c[s]
	}
	return le / math.Pow(2, float64(n))
}

// Spearman is Spearman's rank correlation of x and y (Pearson's on their
// average ranks, as scipy.stats.spearmanr).
func Spearman(x, y []float64) float64 {
	if len(x) < 2 || len(x) != len(y) {
		return math.NaN()
	}
	return stat.Correlation(Ranks(x), Ranks(y), nil)
}

// WeightedKappa is Cohen's kappa with quadratic weights between two raters'
// integer scores on the scale lo..hi, as sklearn's cohen_kappa_score(a, b,
// weights="quadratic") with labels lo..hi.
func WeightedKappa(a, b []int, lo, hi int) float64 {
	k := hi - lo + 1
	if len(a) == 0 || len(a) != len(b) || k < 2 {
		return math.NaN()
	}
	obs := make([][]float64, k)
	for i := range obs {
		obs[i] = make([]float64, k)
	}
	ra, rb := make([]float64, k), make([]float64, k)
	for i := range a {
		x, y := a[i]-lo, b[i]-lo
		if x < 0 || x >= k || y < 0 || y >= k {
			return math.NaN()
		}
		obs[x][y]++
		ra[x]++
		rb[y]++
	}
	n := float64(len(a))
	num, den := 0.0, 0.0
	for i := range k {
		for j := range k {
			w := float64((i - j) * (i - j))
			num += w * obs[i][j]
			den += w * ra[i] * rb[j] / n
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return 1 - num/den
}
