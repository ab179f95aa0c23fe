//go:build unix

package main

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used: the
// benchmark's cpu-ms/op is engine, store and provider together, the
// figure that stays stable on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
