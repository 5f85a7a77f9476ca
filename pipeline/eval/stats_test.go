package eval

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// The expected figures are scipy's and sklearn's: the examples of their
// documentation, and a hand computation of the textbook formula where
// noted.
func TestMannWhitneyUAgainstScipy(t *testing.T) {
	// scipy.stats.mannwhitneyu documentation: males vs females.
	males, females := []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}
	r := MannWhitneyU(males, females)
	near(t, "U", r.Statistic, 17, 0)
	near(t, "exact p", r.P, 0.1111111111111111, 1e-12)
	if !r.Exact {
		t.Error("small untied samples: want the exact p-value")
	}
	// The same with method="asymptotic".
	near(t, "asymptotic p", mwuAsymptotic(5, 4, 17, 0), 0.11134688653314041, 1e-9)
	// Fully separated samples of 5: p = 2/C(10,5).
	r = MannWhitneyU([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	near(t, "U separated", r.Statistic, 0, 0)
	near(t, "p separated", r.P, 2.0/252, 1e-12)
	// Ties force the approximation.
	if r := MannWhitneyU([]float64{1, 1, 2, 3}, []float64{2, 3, 3, 4}); r.Exact {
		t.Error("tied samples: the exact distribution does not hold")
	}
}

func TestWilcoxonAgainstScipy(t *testing.T) {
	// scipy.stats.wilcoxon documentation: differences of 15 pairs.
	d := []float64{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75}
	zero := make([]float64, len(d))
	r := Wilcoxon(d, zero)
	near(t, "T", r.Statistic, 24, 0)
	near(t, "exact p", r.P, 0.041259765625, 1e-12)
	// Tied differences and a zero (dropped): the normal approximation
	// with tie correction, computed by hand: T = 10.5 of 11 differences.
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	y := []float64{2, 2, 1, 1, 1, 9, 3, 1, 3, 3, 15, 2}
	r = Wilcoxon(x, y)
	near(t, "T ties", r.Statistic, 10.5, 0)
	near(t, "approx p", r.P, 0.044808169874368024, 1e-9)
	if r.N != 11 || r.Exact {
		t.Errorf("n = %d exact = %v, want 11 differences and the approximation", r.N, r.Exact)
	}
}

func TestSpearmanAgainstScipy(t *testing.T) {
	// scipy.stats.spearmanr documentation.
	near(t, "rho", Spearman([]float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}), 0.8207826816681233, 1e-12)
	near(t, "rho reversed", Spearman([]float64{1, 2, 3}, []float64{3, 2, 1}), -1, 1e-12)
}

func TestWeightedKappaAgainstSklearn(t *testing.T) {
	// cohen_kappa_score(a, b, weights="quadratic"), by hand: 0.75.
	a := []int{0, 1, 2, 2, 3, 1, 0, 3}
	b := []int{0, 2, 2, 1, 3, 1, 1, 2}
	near(t, "kappa", WeightedKappa(a, b, 0, 3), 0.75, 1e-12)
	near(t, "kappa identical", WeightedKappa(a, a, 0, 3), 1, 1e-12)
	if k := WeightedKappa([]int{0, 11}, []int{0, 1}, 0, 10); !math.IsNaN(k) {
		t.Errorf("a score off the scale gave %v, want NaN", k)
	}
}

func TestBootstrapMean(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	a := BootstrapMean(xs, 0.95, 2000, 1)
	b := BootstrapMean(xs, 0.95, 2000, 1)
	if a != b {
		t.Errorf("same seed, different intervals: %+v %+v", a, b)
	}
	near(t, "mean", a.Mean, 5.5, 1e-12)
	// The standard error is 2.87/√10 ≈ 0.91: a 95% interval is about ±1.8.
	if a.Low > 4.2 || a.Low < 3.2 || a.High < 6.8 || a.High > 7.8 {
		t.Errorf("interval %.2f–%.2f, want about 3.7–7.3", a.Low, a.High)
	}
}
