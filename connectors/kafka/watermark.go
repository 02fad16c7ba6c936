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
// counting until it brings one again.
//
// The clock is judged on a timer as well as on arrivals (the idle timer in
// Source.Run), so a partition goes idle, and the watermark moves on, while
// no record arrives at all. When every partition is idle, the watermark is
// the one they left as they went idle one after another: the minimum over
// those that brought records last. So the result does not depend on
// whether the timer woke between two partitions going idle or after both.
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
// false when no partition is left.
func (c *partitionClocks) watermark(now time.Time) (wm int64, ok bool) {
	if len(c.parts) == 0 {
		return 0, false
	}
	allIdle := true
	var last time.Time // when the most recently active partition brought records
	for _, pc := range c.parts {
		allIdle = allIdle && c.idleAt(pc, now)
		if pc.active.After(last) {
			last = pc.active
		}
	}
	w := int64(exec.MaxWatermark)
	for _, pc := range c.parts {
		counts := !c.idleAt(pc, now)
		if allIdle {
			counts = !pc.active.Before(last) // the last to go idle
		}
		if !counts {
			continue
		}
		if pc.maxTs == minTs {
			return exec.MinWatermark, true
		}
		w = min(w, pc.maxTs)
	}
	return w * 1000, true
}

// nextIdle is how long until some counting partition turns idle (0: none
// will, without an idle timeout): the source's timer wakes then.
func (c *partitionClocks) nextIdle(now time.Time) time.Duration {
	if c.idle <= 0 {
		return 0
	}
	next := time.Duration(0)
	for _, pc := range c.parts {
		if c.idleAt(pc, now) {
			continue
		}
		d := c.idle - now.Sub(pc.active) + time.Millisecond
		if next == 0 || d < next {
			next = d
		}
	}
	return next
}
