package sql

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5 s": 5 * time.Second, "500 ms": 500 * time.Millisecond, "1 min": time.Minute,
		"2h": 2 * time.Hour, "1500": 1500 * time.Millisecond, "30 seconds": 30 * time.Second,
		"1 h": time.Hour, "10 minutes": 10 * time.Minute, "1 d": 24 * time.Hour, "2 days": 48 * time.Hour,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"soon", "", "5 parsecs", "9223372036854775807", "200000 days"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
