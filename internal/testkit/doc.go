// Package testkit holds what muse's tests and benchmarks share and nothing
// else imports: where the real evaluation data is (SharedData), the switch
// for the tests that tune over folds or a split (Tuning), and the
// measurements the benchmarks report (ProcessCPU, SampleMemory, PeakRSS).
// The fakes of an outside service live beside its client instead
// (sources/llm/llmtest, sources/fetch/fetchtest, …), like net/http/httptest.
package testkit
