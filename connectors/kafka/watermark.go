package kafka

import (
	"time"

	"github.com/clink-sql/clink/exec"
)

// partitionClocks is the event-time clock of a source that reads several
// partitions, as Flink's per-split watermarks define it: each partition's
// clock is the latest event time of its records, and the source's
// watermark is the minimum over the partitions still running. A partition
// that has brought nothing yet holds the watermark at its minimum (its
// first records may be the oldest of all), unless it is idle: with
// 'scan.watermark.idle-timeout' a partition that brought no record for
// that long, from the start of the scan or since its last record, stops
// counting until it brings one again. When every partition is idle the
// watermark stays where it is.
type partitionClocks struct {
	idle  time.Duration
	parts map[int32]*partClock
}

type partClock struct {
	maxTs  int64     // ms; minTs before the first record
	active time.Time // when the partition last brought records (or the scan started)
}

func newPartitionClocks(parts []int32, idle time.Duration, now time.Time) *partitionClocks {
	c := &partitionClocks{idle: idle, parts: make(map[int32]*partClock, len(parts))}
	for _, p := range parts {
		c.parts[p] = &partClock{maxTs: minTs, active: now}
	}
	return c
}

// live is the number of partitions that have not ended.
func (c *partitionClocks) live() int { return len(c.parts) }

// observe records a batch of partition p: maxTs is its latest event time
// (ms, minTs when it had none), brought whether it held any record.
func (c *partitionClocks) observe(p int32, maxTs int64, brought bool, now time.Time) {
	pc := c.parts[p]
	if pc == nil {
		return
	}
	pc.maxTs = max(pc.maxTs, maxTs)
	if brought {
		pc.active = now
	}
}

// end removes a partition that reached its bounded end: it holds nothing
// back any more.
func (c *partitionClocks) end(p int32) { delete(c.parts, p) }

// idleAt reports whether partition pc counts as idle at now.
func (c *partitionClocks) idleAt(pc *partClock, now time.Time) bool {
	return c.idle > 0 && now.Sub(pc.active) > c.idle
}

// watermark is the source's watermark at now, in microseconds:
// exec.MinWatermark while a counting partition has no record yet, and ok =
// false when nothing counts (no partition left, or every one idle).
func (c *partitionClocks) watermark(now time.Time) (wm int64, ok bool) {
	w := int64(exec.MaxWatermark)
	counted := false
	for _, pc := range c.parts {
		if c.idleAt(pc, now) {
			continue
		}
		counted = true
		if pc.maxTs == minTs {
			return exec.MinWatermark, true
		}
		w = min(w, pc.maxTs)
	}
	if !counted {
		return 0, false
	}
	return w * 1000, true
}
