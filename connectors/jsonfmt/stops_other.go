//go:build !amd64

package jsonfmt

// haveStopIndex is false off amd64: skipString scans a word at a time.
var haveStopIndex = false

// stopIndex is only called when haveStopIndex is set.
func stopIndex(b []byte) int { panic("jsonfmt: stopIndex without AVX2") }
