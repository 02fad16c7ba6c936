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
	if d := c.nextIdle(start.Add(9 * time.Second)); d <= 0 || d > 2*time.Second {
		t.Fatalf("next idle in %s, want about 1 s (partition 1)", d)
	}
	if w, _ := c.watermark(start.Add(10*time.Second + time.Millisecond)); w != 5000*1000 {
		t.Fatalf("partition 1 idle: watermark %d, want 5000 ms", w)
	}
	// Back from idle: a record makes it count again.
	c.observe(1, 3000, true, start.Add(11*time.Second))
	if w, _ := c.watermark(start.Add(11 * time.Second)); w != 3000*1000 {
		t.Fatalf("partition 1 back: watermark %d, want 3000 ms", w)
	}
	// Everything idle: the watermark partition 1, the last to go idle,
	// left (it went idle alone, 10 s after the others).
	if w, ok := c.watermark(start.Add(time.Hour)); !ok || w != 3000*1000 {
		t.Fatalf("every partition idle: watermark %d (ok %v), want 3000 ms", w, ok)
	}
	if d := c.nextIdle(start.Add(time.Hour)); d != 0 {
		t.Fatalf("every partition idle: next idle in %s, want none", d)
	}
}

// The idle timer may wake only after every partition went idle; the
// watermark is still the one the partitions left going idle one by one.
func TestPartitionClocksTimerLate(t *testing.T) {
	start := time.Unix(1000, 0)
	c := newPartitionClocks([]int32{0, 1}, 500*time.Millisecond, start)
	c.observe(0, 59_000, true, start.Add(time.Millisecond))
	// Partition 1 never produced: idle from 500 ms, partition 0 from 501 ms.
	if w, _ := c.watermark(start.Add(500*time.Millisecond + time.Microsecond)); w != 59_000*1000 {
		t.Fatalf("partition 1 idle: watermark %d, want 59 s", w)
	}
	if w, ok := c.watermark(start.Add(time.Minute)); !ok || w != 59_000*1000 {
		t.Fatalf("both idle: watermark %d (ok %v), want 59 s", w, ok)
	}
	// Nothing produced anywhere: idle or not, no clock.
	e := newPartitionClocks([]int32{0, 1}, 500*time.Millisecond, start)
	if w, _ := e.watermark(start.Add(time.Minute)); w != exec.MinWatermark {
		t.Fatalf("no records: watermark %d, want the minimum", w)
	}
}
