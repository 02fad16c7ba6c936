package kafka

import (
	"testing"
	"time"
)

func TestWithoutIdle(t *testing.T) {
	now := time.Unix(1000, 0)
	live := map[int32]int64{0: 5000, 1: minTs, 2: 9000}
	active := map[int32]time.Time{0: now.Add(-time.Second), 1: now.Add(-time.Minute), 2: now}
	// No timeout: the partition that never brought a record holds it back.
	if w := watermark(withoutIdle(live, active, 0, now)); w != -1<<63 {
		t.Fatalf("without idle-timeout the watermark is %d, want the minimum", w)
	}
	// 10 s: partition 1 (idle a minute) no longer counts.
	if w := watermark(withoutIdle(live, active, 10*time.Second, now)); w != 5000*1000 {
		t.Fatalf("with idle-timeout 10s the watermark is %d, want 5000 ms", w)
	}
	// Everything idle: nothing is dropped, the watermark does not jump.
	if w := watermark(withoutIdle(live, active, time.Millisecond, now.Add(time.Hour))); w != -1<<63 {
		t.Fatalf("all idle: watermark %d", w)
	}
}

func TestParseFlinkDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5 s": 5 * time.Second, "500 ms": 500 * time.Millisecond, "1 min": time.Minute,
		"2h": 2 * time.Hour, "1500": 1500 * time.Millisecond, "30 seconds": 30 * time.Second,
	} {
		if got, err := parseFlinkDuration(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	if _, err := parseFlinkDuration("soon"); err == nil {
		t.Error("'soon' parsed")
	}
}
