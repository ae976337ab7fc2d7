//go:build unix

package toolcert

import "syscall"

// cpuTime is the process's CPU time in nanoseconds (user and system): `elapsed_ns` prices
// the accumulation by the subject's own cost, not by the wall clock a loaded machine
// stretches (docs/PROTOCOL.md, "results").
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
