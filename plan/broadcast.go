package plan

// rowCounter is a table that knows its row count from metadata (Parquet
// footers); negative: unknown.
type rowCounter interface {
	NumRows() int64
}

// chooseBroadcasts marks the batch hash joins that run as broadcast
// joins: each probe subtask gets the whole build side and builds its own
// table, and the probe rows stay where they were scanned. A keyed join
// sends both inputs through exchanges instead, hashing and gathering every
// probe row to pay for a build side split across subtasks.
//
// Only where a probe subtask can decide each of its rows alone (INNER,
// LEFT, SEMI, ANTI, MARK and SINGLE joins that are not null-aware: a
// RIGHT or FULL join's unmatched build rows would come out of every
// subtask), when the build side is a scan (under filters and projections)
// of a table of at most BroadcastRows rows, and, where the probe side's
// rows are known too, at least parallelism times as many probe rows as
// build rows: every subtask hashes the whole build side, which must cost
// less than the probe shuffle saved. The physical plan broadcasts only
// where the probe side is in fact parallel.
func chooseBroadcasts(n Node, o *RuleOptions) (Node, error) {
	if o.BroadcastRows <= 0 || o.Parallelism < 2 {
		return n, nil
	}
	return rewritePlan(n, func(x Node) (Node, error) {
		j, ok := x.(*Join)
		if !ok || j.Stream || len(j.LeftKeys) == 0 || !j.Kind.preservesLeftAlone() || j.NullAware {
			return x, nil
		}
		rows, ok := scanRows(j.Right)
		if !ok || rows > o.BroadcastRows {
			return x, nil
		}
		if p, ok := scanRows(j.Left); ok && p < rows*int64(o.Parallelism) {
			return x, nil
		}
		c := *j
		c.Broadcast = max(rows, 1)
		return &c, nil
	})
}

// twoPhaseAggregates marks the aggregates that run in two phases at
// parallelism above one: each subtask aggregates what it holds, and only
// the partial results cross the exchange, so a GROUP BY with few groups
// moves a few rows instead of every row. Only aggregates whose partial
// results merge (COUNT and SUM add up, MIN and MAX take the extreme).
func twoPhaseAggregates(n Node, o *RuleOptions) (Node, error) {
	if o.Parallelism < 2 {
		return n, nil
	}
	return rewritePlan(n, func(x Node) (Node, error) {
		a, ok := x.(*Aggregate)
		if !ok || a.Updating {
			return x, nil
		}
		if _, ok := finalAggs(a); !ok {
			return x, nil
		}
		c := *a
		c.TwoPhase = true
		return &c, nil
	})
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
