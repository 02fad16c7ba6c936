package exec

import (
	"sync/atomic"
	"time"
)

// StageStats are one stage's runtime counters, read by EXPLAIN ANALYZE.
// They are atomics so a report can be taken while the query runs.
type StageStats struct {
	RowsIn, BatchesIn            atomic.Int64
	BatchesInColumnar            atomic.Int64 // arrived carrying a record
	BatchesInRows                atomic.Int64 // arrived as rows only
	BatchesColumnarPath          atomic.Int64 // taken by the columnar hook
	RowsOut, BatchesOut          atomic.Int64
	BatchesOutColumnar           atomic.Int64 // emitted carrying a record
	BatchesOutRows               atomic.Int64 // emitted as rows only
	BatchesMaterialized          atomic.Int64 // decodes this stage caused
	RowsMaterialized             atomic.Int64
	ColumnarEmits, HeldBackEmits atomic.Int64 // born-columnar output vs held back by a damper
	DecodeFallbacks              atomic.Int64
	SkippedRecords               atomic.Int64
	WatermarksIn                 atomic.Int64
	Nanos                        atomic.Int64 // time in this stage, excluding downstream
	LastWatermark                atomic.Int64
	Started, Finished            atomic.Bool
	startedAt                    atomic.Int64
}

// Elapsed is the time spent in the stage itself.
func (s *StageStats) Elapsed() time.Duration { return time.Duration(s.Nanos.Load()) }

// Damper decides whether building Arrow output pays. After Threshold
// consecutive emissions under MinRows rows it backs off to rows and only
// re-probes every Probe-th emission (seed 000: 4, 64, 64 for output; the
// JSON decode bridge uses 8 consecutive fallbacks and 64).
type Damper struct {
	Threshold, MinRows, Probe int

	small    int // consecutive small emissions
	skipped  int // emissions since backing off
	backedOn bool
}

// NewOutputDamper is the born-columnar output damper of seed 000.
func NewOutputDamper() *Damper { return &Damper{Threshold: 4, MinRows: 64, Probe: 64} }

// Try reports whether the next emission should be built columnar.
func (d *Damper) Try() bool {
	if !d.backedOn {
		return true
	}
	d.skipped++
	if d.skipped >= d.Probe {
		d.skipped = 0
		return true
	}
	return false
}

// Observe records the size of an emission that was built columnar.
func (d *Damper) Observe(rows int) {
	if rows < d.MinRows {
		d.small++
		if d.small >= d.Threshold {
			d.backedOn = true
		}
		return
	}
	d.small = 0
	d.backedOn = false
	d.skipped = 0
}

// BackedOff reports the damper's state, for EXPLAIN ANALYZE.
func (d *Damper) BackedOff() bool { return d.backedOn }

// Progress is how far a scan has read, for the shell's progress line. Totals
// are zero when unknown (an unbounded source).
type Progress struct {
	RowsRead, BytesRead   atomic.Int64
	RowsTotal, BytesTotal atomic.Int64
}
