//go:build !linux

package engine

// totalMemory is unknown here: no memory limit is set.
func totalMemory() uint64 { return 0 }
