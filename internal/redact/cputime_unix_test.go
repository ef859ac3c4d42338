//go:build unix

package redact

import "syscall"

// cpuTime returns the process's user+system CPU time in seconds. Benchmarks report
// throughput per CPU second too, because wall-clock MB/s on a shared machine measures the
// neighbours as much as the code.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
