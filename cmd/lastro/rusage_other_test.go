//go:build !unix

package main

import "time"

// processCPU is unavailable here; the cpu-ms/op metric then reads 0.
func processCPU() time.Duration { return 0 }
