package main

import (
	"errors"
	"fmt"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
)

// The exit codes, one table for every command (as gh's internal/ghcmd).
// The README's table is checked against exitTable by TestReadmeTables.
const (
	exitOK         = 0 // done
	exitFailed     = 1 // failed: the reason is on stderr
	exitUsage      = 2 // usage or configuration: a bad flag or argument, nothing to check, nothing set up
	exitNoEvidence = 3 // no evidence could be obtained: every page or provider failed, or the model was unreadable
)

// exitTable is the table in words, in code order.
var exitTable = []struct {
	Code    int
	Meaning string
}{
	{exitOK, "done (a check that found no credible source is done too)"},
	{exitFailed, "failed; the last line on stderr says why"},
	{exitUsage, "usage or configuration: unknown command or flag, bad argument, nothing to check, no model or search configured"},
	{exitNoEvidence, "no evidence could be obtained: every page or search provider failed, or the model's answers could not be read"},
}

// usageError marks an error as the user's to fix in the command line or
// the configuration (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usage marks err as a usage or configuration error; nil stays nil.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// usagef is usage(fmt.Errorf(format, a...)).
func usagef(format string, a ...any) error { return usage(fmt.Errorf(format, a...)) }

// exitCode maps what a command returned to the process's exit code.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, pipeline.ErrEmptyPost), errors.Is(err, pipeline.ErrNoModel),
		errors.Is(err, setup.ErrNothingToSearch), errors.Is(err, setup.ErrConfig):
		return exitUsage
	case errors.Is(err, pipeline.ErrNoEvidence):
		return exitNoEvidence
	default:
		return exitFailed
	}
}
