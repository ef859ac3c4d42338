package config

import (
	"errors"
	"fmt"
)

var errNegative = errors.New("negative duration")

// Error is one problem in a configuration file, at a line (0 when unknown). Load and Parse
// return every problem found, each an *Error, joined with errors.Join; use errors.As.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}
