//go:build unix

package ddblocal_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used, so
// a benchmark can report what each operation costs in CPU, client and
// store together: on a machine with C cores the throughput cannot exceed
// C / cpu-per-op, whatever the store does with its disk.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
