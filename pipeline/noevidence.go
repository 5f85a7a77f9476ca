package pipeline

import "errors"

// ErrNoEvidence is wrapped by a check that ended with no evidence because
// every page or provider failed or the model's answers could not be read (a
// genuine "no credible source was found" is not an error). `muse` exits 3.
var ErrNoEvidence = errors.New("no evidence could be obtained")
