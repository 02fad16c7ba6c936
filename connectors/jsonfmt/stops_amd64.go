package jsonfmt

import "golang.org/x/sys/cpu"

// haveStopIndex says whether stopIndex runs here (AVX2). skipString falls
// back to its word-at-a-time scan without it; tests switch it off to cover
// both.
var haveStopIndex = cpu.X86.HasAVX2

// stopIndex returns the offset of the first quote, backslash or control
// character in the whole 32-byte blocks of b (len(b) rounded down to a
// multiple of 32), or -1 when they have none. It is the AVX2 form of the
// stops32 loop: 32 bytes in five vector instructions instead of four
// words' twelve scalar tests and gathers, and the unread strings it skips
// are most of a nexmark record's bytes (stops_amd64.s).
//
//go:noescape
func stopIndex(b []byte) int
