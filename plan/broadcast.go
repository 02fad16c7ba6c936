package plan

// rowCounter is a table that knows its row count from metadata (Parquet
// footers); negative: unknown.
type rowCounter interface {
	NumRows() int64
}

// broadcastBuild decides whether a batch hash join is wired as a broadcast
// join: each probe subtask gets the whole build side and builds its own
// table, and the probe rows stay where they were scanned. A keyed join
// sends both inputs through exchanges instead, hashing and gathering every
// probe row to pay for a build side split across subtasks. It reports the
// build side's row estimate.
//
// Only where a probe subtask can decide each of its rows alone: INNER and
// LEFT joins (a RIGHT or FULL join's unmatched build rows would come out of
// every subtask), a parallel probe side, a build side that is a scan
// (under filters and projections) of a table of at most BroadcastRows
// rows, and, where the probe side's rows are known too, at least
// parallelism times as many probe rows as build rows: every subtask hashes
// the whole build side, which must cost less than the probe shuffle saved.
func (b *builder) broadcastBuild(x *Join, probe *Stage) (int64, bool) {
	if b.opts.BroadcastRows <= 0 || len(probe.Instances) < 2 || !x.Kind.preservesLeftAlone() || x.NullAware {
		return 0, false
	}
	rows, ok := scanRows(x.Right)
	if !ok || rows > b.opts.BroadcastRows {
		return 0, false
	}
	if p, ok := scanRows(x.Left); ok && p < rows*int64(len(probe.Instances)) {
		return 0, false
	}
	return rows, true
}

// scanRows is an upper bound of n's rows when n is a scan of a table that
// counts its rows, under filters and projections.
func scanRows(n Node) (int64, bool) {
	switch x := n.(type) {
	case *Scan:
		if c, ok := x.Table.(rowCounter); ok {
			n := c.NumRows()
			return n, n >= 0
		}
	case *Filter:
		return scanRows(x.Input)
	case *Project:
		return scanRows(x.Input)
	}
	return 0, false
}
