package exec

import (
	"sync"
	"sync/atomic"
	"time"
)

// StageStats are one stage's runtime counters, read by EXPLAIN ANALYZE.
// They are atomics so a report can be taken while the query runs.
type StageStats struct {
	RowsIn, BatchesIn   atomic.Int64
	BatchesInColumnar   atomic.Int64 // arrived carrying a record
	BatchesInRows       atomic.Int64 // arrived as rows only
	BatchesColumnarPath atomic.Int64 // taken by the columnar hook
	RowsOut, BatchesOut atomic.Int64
	BatchesOutColumnar  atomic.Int64 // emitted carrying a record
	BatchesOutRows      atomic.Int64 // emitted as rows only
	BatchesMaterialized atomic.Int64 // decodes this stage caused
	RowsMaterialized    atomic.Int64
	WatermarksIn        atomic.Int64
	Nanos               atomic.Int64 // time in this stage, excluding downstream
	LastWatermark       atomic.Int64
	Started, Finished   atomic.Bool
	// What only the operator knows (born-columnar emissions against those
	// a damper held back, decode fallbacks, skipped records) is not
	// counted here: the runner cannot see it, and the operator reports it
	// through Reporter after the run.
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

// Reporter is implemented by operators and sources that count things the
// runner cannot see from outside: born-columnar emissions against those a
// damper held back to rows, decode fallbacks, skipped records, their own
// named counters. EXPLAIN ANALYZE reads it after the run; the runner never
// calls it, so implementing it costs the hot path nothing. Report is called
// only while the operator is not running (after Graph.Run returns).
type Reporter interface {
	Report() OperatorReport
}

// OperatorReport is one operator's or source's own account of its run.
type OperatorReport struct {
	ColumnarEmits   int64 // emissions built born columnar
	HeldBackEmits   int64 // emissions a damper held back to rows
	DecodeFallbacks int64 // batches decoded as rows because columnar decode failed
	SkippedRecords  int64 // bad input records skipped
	Damper          *DamperState
	// Counters are further named counts in SQL terms ("build rows", "row
	// groups skipped"), shown by EXPLAIN (VERBOSE) ANALYZE.
	Counters []NamedCount
}

// NamedCount is one named counter of an OperatorReport.
type NamedCount struct {
	Name  string
	Value int64
}

// DamperState is a snapshot of a Damper, for EXPLAIN ANALYZE.
type DamperState struct {
	BackedOff                 bool
	SmallRun                  int // consecutive emissions under MinRows
	Threshold, MinRows, Probe int
}

// State snapshots the damper.
func (d *Damper) State() DamperState {
	return DamperState{BackedOff: d.backedOn, SmallRun: d.small, Threshold: d.Threshold, MinRows: d.MinRows, Probe: d.Probe}
}

// KindTotals are process-wide counters of one operator or source kind
// ("filter", "parquet-scan"), published on /metrics.
type KindTotals struct {
	RowsIn, RowsOut                       int64
	BatchesIn, BatchesOut                 int64
	BatchesInColumnar, BatchesOutColumnar int64
	BatchesMaterialized, RowsMaterialized int64
}

func (t *KindTotals) add(s *StageStats) {
	t.RowsIn += s.RowsIn.Load()
	t.RowsOut += s.RowsOut.Load()
	t.BatchesIn += s.BatchesIn.Load()
	t.BatchesOut += s.BatchesOut.Load()
	t.BatchesInColumnar += s.BatchesInColumnar.Load()
	t.BatchesOutColumnar += s.BatchesOutColumnar.Load()
	t.BatchesMaterialized += s.BatchesMaterialized.Load()
	t.RowsMaterialized += s.RowsMaterialized.Load()
}

// kindTotals sums finished graphs into per-kind totals and reads running
// graphs' stage counters at snapshot time. The hot path pays nothing extra:
// the stage counters it already keeps are the source, read when /metrics is
// scraped, and a graph is folded into the totals once, when it ends. Folding
// and snapshotting share one lock, so the totals never go backwards.
var kindTotals = struct {
	mu   sync.Mutex
	done map[string]*KindTotals
	live map[*Graph]struct{}
}{done: map[string]*KindTotals{}, live: map[*Graph]struct{}{}}

func (s *Stage) kind() string {
	if s.Op != nil {
		return s.Op.Kind()
	}
	return s.Src.Kind()
}

// trackGraph makes a running graph's counters visible in OperatorTotals.
func trackGraph(g *Graph) {
	kindTotals.mu.Lock()
	kindTotals.live[g] = struct{}{}
	kindTotals.mu.Unlock()
}

// untrackGraph folds a finished graph into the process-wide totals.
func untrackGraph(g *Graph) {
	kindTotals.mu.Lock()
	defer kindTotals.mu.Unlock()
	delete(kindTotals.live, g)
	for _, s := range g.stages {
		k := s.kind()
		t := kindTotals.done[k]
		if t == nil {
			t = &KindTotals{}
			kindTotals.done[k] = t
		}
		t.add(&s.Stats)
	}
}

// OperatorTotals snapshots the process-wide per-kind counters: every
// finished graph plus the running ones so far.
func OperatorTotals() map[string]KindTotals {
	kindTotals.mu.Lock()
	defer kindTotals.mu.Unlock()
	out := make(map[string]KindTotals, len(kindTotals.done))
	for k, t := range kindTotals.done {
		out[k] = *t
	}
	for g := range kindTotals.live {
		for _, s := range g.stages {
			t := out[s.kind()]
			t.add(&s.Stats)
			out[s.kind()] = t
		}
	}
	return out
}
