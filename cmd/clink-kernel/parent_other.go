//go:build !unix

package main

import "os"

// processExists reports whether pid names a live process. Outside Unix,
// os.FindProcess opens a handle only for a live process.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
