//go:build !unix

package toolcert

import "time"

var started = time.Now()

// cpuTime falls back to the wall clock where the process's CPU time cannot be read.
func cpuTime() int64 { return int64(time.Since(started)) }
