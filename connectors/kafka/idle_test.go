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
