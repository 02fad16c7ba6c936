package kafka

import (
	"testing"
	"time"

	"github.com/clink-sql/clink/exec"
)

func TestPartitionClocks(t *testing.T) {
	start := time.Unix(1000, 0)
	c := newPartitionClocks([]int32{0, 1, 2}, 0, start)
	c.observe(0, 5000, true, start)
	c.observe(2, 9000, true, start)
	// Partition 1 has brought nothing: its first records may be the
	// oldest of all, so the watermark stays at the minimum.
	if w, ok := c.watermark(start.Add(time.Hour)); !ok || w != exec.MinWatermark {
		t.Fatalf("before partition 1 produced: watermark %d (ok %v), want the minimum", w, ok)
	}
	c.observe(1, 7000, true, start)
	if w, _ := c.watermark(start); w != 5000*1000 {
		t.Fatalf("every partition produced: watermark %d, want 5000 ms", w)
	}
	// A batch without records moves nothing.
	c.observe(0, minTs, false, start)
	if w, _ := c.watermark(start); w != 5000*1000 {
		t.Fatalf("after an empty batch: watermark %d", w)
	}
	// A partition that ended holds nothing back.
	c.end(0)
	if w, _ := c.watermark(start); w != 7000*1000 {
		t.Fatalf("partition 0 ended: watermark %d, want 7000 ms", w)
	}
	if c.live() != 2 {
		t.Fatalf("live %d, want 2", c.live())
	}
}

func TestPartitionClocksIdle(t *testing.T) {
	start := time.Unix(1000, 0)
	c := newPartitionClocks([]int32{0, 1, 2}, 10*time.Second, start)
	c.observe(0, 5000, true, start.Add(time.Second))
	c.observe(2, 9000, true, start.Add(2*time.Second))
	// Partition 1 never produced: it holds the watermark back until it
	// has been idle for the timeout, counted from the scan's start.
	if w, _ := c.watermark(start.Add(9 * time.Second)); w != exec.MinWatermark {
		t.Fatalf("partition 1 not idle yet: watermark %d", w)
	}
	if w, _ := c.watermark(start.Add(10*time.Second + time.Millisecond)); w != 5000*1000 {
		t.Fatalf("partition 1 idle: watermark %d, want 5000 ms", w)
	}
	// Back from idle: a record makes it count again.
	c.observe(1, 3000, true, start.Add(11*time.Second))
	if w, _ := c.watermark(start.Add(11 * time.Second)); w != 3000*1000 {
		t.Fatalf("partition 1 back: watermark %d, want 3000 ms", w)
	}
	// Everything idle: nothing counts and the watermark stays put.
	if _, ok := c.watermark(start.Add(time.Hour)); ok {
		t.Fatal("every partition idle, yet a watermark was computed")
	}
}
