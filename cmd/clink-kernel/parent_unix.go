//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processExists reports whether pid names a live process: signal 0 checks
// without sending anything, and EPERM means it exists but is not ours.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
