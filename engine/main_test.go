package engine

import (
	"flag"
	"os"
	"testing"
)

// TestMain runs the engine's tests with every exchange block, every
// Parquet scan block and every filter and hash join output block poisoned
// (CLINK_SHUFFLE_RECYCLE, CLINK_PARQUET_RECYCLE and CLINK_OPERATOR_RECYCLE
// = poison: 0xFF when handed out and when released)
// unless the variable is set: all recycle their batch memory by default,
// and an operator that keeps a string aliasing a released batch, reads one
// after releasing it, or reads bytes the producer never wrote then gets a
// wrong answer in every run instead of in a rare one.
// (Removing the string copy of exec.Value fails the stream join tests this
// way; with plain recycling they pass.) Benchmarks keep the default.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		for _, v := range []string{"CLINK_SHUFFLE_RECYCLE", "CLINK_PARQUET_RECYCLE", "CLINK_OPERATOR_RECYCLE"} {
			if _, set := os.LookupEnv(v); !set {
				os.Setenv(v, "poison")
			}
		}
	}
	os.Exit(m.Run())
}
