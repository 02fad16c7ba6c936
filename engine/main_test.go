package engine

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs the engine's tests with every exchange block poisoned
// (CLINK_SHUFFLE_RECYCLE=poison: 0xFF when handed out and when released)
// unless the variable is set: the exchange recycles its sub-batch memory
// by default, and an operator that keeps a string aliasing a released
// sub-batch, reads one after releasing it, or reads bytes the split never
// wrote then gets a wrong answer in every run instead of in a rare one.
// (Removing the string copy of exec.Value fails the stream join tests this
// way; with plain recycling they pass.) Benchmarks keep the default.
func TestMain(m *testing.M) {
	flag.Parse()
	if _, set := os.LookupEnv("CLINK_SHUFFLE_RECYCLE"); !set && flag.Lookup("test.bench").Value.String() == "" {
		os.Setenv("CLINK_SHUFFLE_RECYCLE", "poison")
	}
	os.Exit(m.Run())
}
