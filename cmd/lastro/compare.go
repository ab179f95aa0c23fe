package main

import (
	"context"
	"errors"
	"io"
)

// compareCmd: lastro cost compare (the seed's comparisons).
func compareCmd(_ context.Context, _ []string, _, _ io.Writer) error {
	return errors.New("lastro cost compare: not built yet")
}
