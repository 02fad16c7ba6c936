package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
)

// This file turns each logical node into stages; physical.go holds the
// stage model, the wiring of parallel instances and the gates.

// build plans n once: a node several parents share (a CTE used twice) is
// one stage whose output feeds every consumer.
func (b *builder) build(n Node) (*Stage, error) {
	if s, ok := b.built[n]; ok {
		return s, nil
	}
	s, err := b.buildNode(n)
	if err == nil {
		if b.schemas == nil {
			b.schemas = map[*Stage]*arrow.Schema{}
		}
		if b.built == nil {
			b.built = map[Node]*Stage{}
		}
		b.schemas[s] = n.Schema()
		b.built[n] = s
	}
	return s, err
}

func (b *builder) buildNode(n Node) (*Stage, error) {
	mem := b.opts.Mem
	switch x := n.(type) {
	case *Scan:
		full := x.Table.Schema()
		s := &Stage{Op: "Scan", Detail: fmt.Sprintf("%s [%s]", x.TableName, x.Table.Describe()), Parallelism: 1}
		if b.inOrder[x] {
			s.Detail += ", read in file order for a LIMIT without ORDER BY"
		} else if st, ok := x.Table.(connectors.SplitTable); ok && b.opts.Parallelism > 1 {
			s.Parallelism = b.opts.Parallelism
			if m := st.MaxSplits(); m > 0 && m < s.Parallelism {
				s.Parallelism = m
			}
		}
		for _, c := range x.Columns {
			s.Columns = append(s.Columns, full.Field(c).Name)
		}
		for _, f := range x.Filters {
			s.Filters = append(s.Filters, f.Format(full.Field(f.Column).Name))
		}
		var share *connectors.Share
		if !b.opts.FixedSplits && !b.ordered[x] {
			share = &connectors.Share{}
		}
		late := b.opts.Exec.DisableLateMaterialization
		var pred []connectors.Conjunct
		if !late {
			pred = scanConjuncts(x)
		}
		s, err := b.source(s, func(split, splits int) (exec.Source, error) {
			spec := connectors.ScanSpec{Columns: x.Columns, Filters: x.Filters, Predicate: pred, RowGroupsOnly: late, Progress: b.opts.Progress}
			if splits > 1 {
				spec.Split, spec.Splits, spec.Share = split, splits, share
			}
			src, err := x.Table.Open(spec)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", x.TableName, err)
			}
			return src, nil
		})
		if err != nil {
			return nil, err
		}
		if s.Caps.EmitsColumnar {
			s.Output = OutBornColumnar
			s.Gate = &Gate{Columnar: true, Reason: ReasonSourceColumnar}
		} else {
			s.Output = OutRows
		}
		return s, nil
	case *Values:
		s := &Stage{Op: "Values", Detail: fmt.Sprintf("%d row(s)", len(x.Rows)), Output: OutRows, Parallelism: 1}
		return b.source(s, func(int, int) (exec.Source, error) { return ops.NewValues(x.schema, x.Rows), nil })
	case *Filter:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		pred := x.Pred.Compile()
		return b.op("Filter", pred.String(), func() exec.Operator { return ops.NewFilter(pred, mem) }, wireParallel, nil, in), nil
	case *Project:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		if isIdentity(x) {
			// SELECT a, b over an aggregate or a subquery that already
			// produces (a, b): a stage that only copies is left out.
			return in, nil
		}
		exprs := make([]expr.Expr, len(x.Exprs))
		parts := make([]string, len(x.Exprs))
		for i, e := range x.Exprs {
			exprs[i] = e.Compile()
			parts[i] = exprs[i].String()
			if name := x.schema.Field(i).Name; name != parts[i] && !internalName(name) {
				parts[i] += " AS " + name
			}
		}
		return b.op("Project", strings.Join(parts, ", "), func() exec.Operator { return ops.NewProject(exprs, x.schema, mem) }, wireParallel, nil, in), nil
	case *Aggregate:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		var parts []string
		if len(x.GroupCols) > 0 {
			var keys []string
			for i := range x.GroupCols {
				keys = append(keys, x.schema.Field(i).Name)
			}
			parts = append(parts, "GROUP BY "+strings.Join(keys, ", "))
		}
		parts = append(parts, x.AggText...)
		w := wireKeyed
		if len(x.GroupCols) == 0 {
			w = wireGather // one group: one instance sees every row
		}
		if x.Updating {
			// A changelog row carries its kind, which a columnar aggregate
			// result has no column for: rows by construction (the gate
			// reads Capabilities.ChangelogOutput).
			return b.op("UpdatingAggregate", strings.Join(parts, ", "), func() exec.Operator {
				return ops.NewUpdatingAggregate(x.GroupCols, x.Aggs, x.schema, mem)
			}, w, [][]int{x.GroupCols}, in), nil
		}
		if final, ok := finalAggs(x); ok && x.TwoPhase && len(in.Instances) > 1 {
			// Two phases: each subtask aggregates what it scanned, and only
			// the partial results cross the exchange, so a GROUP BY with
			// few groups moves a few rows instead of every row.
			partial := b.op("HashAggregate", "partial: "+strings.Join(parts, ", "), func() exec.Operator {
				return ops.NewHashAggregate(x.GroupCols, x.Aggs, x.schema, mem).PartialFlush()
			}, wireParallel, nil, in)
			b.schemas[partial] = x.schema
			keys := make([]int, len(x.GroupCols))
			for i := range keys {
				keys[i] = i
			}
			// Grouped: the partials are exchanged by key to parallel final
			// merges; one group (no GROUP BY): one final merge gathers them.
			return b.op("HashAggregate", "final: "+strings.Join(parts, ", "), func() exec.Operator {
				return ops.NewHashAggregate(keys, final, x.schema, mem).AllowSpill()
			}, w, [][]int{keys}, partial), nil
		}
		return b.op("HashAggregate", strings.Join(parts, ", "), func() exec.Operator {
			return ops.NewHashAggregate(x.GroupCols, x.Aggs, x.schema, mem).AllowSpill()
		}, w, [][]int{x.GroupCols}, in), nil
	case *SetOp:
		return b.buildSetOp(x)
	case *WindowFuncs:
		return b.buildWindowFuncs(x)
	case *Expand:
		return b.buildExpand(x)
	case *WatermarkAssign, *WindowTable, *WindowAggregate:
		return b.buildWindowing(n) // event time and windows: bind_window.go
	case *Join:
		l, err := b.build(x.Left)
		if err != nil {
			return nil, err
		}
		r, err := b.build(x.Right)
		if err != nil {
			return nil, err
		}
		if x.Stream {
			return b.streamJoin(x, l, r), nil
		}
		return b.batchJoin(x, l, r)
	case *Sort:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		if x.Limit >= 0 {
			return b.topN(x, in), nil // build_topn.go
		}
		return b.op("Sort", sortKeysText(x.Schema(), x.Keys), func() exec.Operator { return ops.NewSort(x.Keys, mem) }, wireGather, nil, in), nil
	case *UpdatingTopN:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		detail := fmt.Sprintf("%s LIMIT %d", sortKeysText(x.Schema(), x.Keys), x.N)
		if x.Offset > 0 {
			detail += fmt.Sprintf(" OFFSET %d", x.Offset)
		}
		// One instance: the top-n is global.
		if x.Changelog {
			detail += "; over an updating result: holds every current row"
		}
		// A changelog row carries its kind: rows by construction (the gate
		// reads Capabilities.ChangelogOutput).
		return b.op("UpdatingTopN", detail, func() exec.Operator {
			if x.Changelog {
				return ops.NewRetractingTopN(x.Keys, x.N, x.Offset, x.schema)
			}
			return ops.NewUpdatingTopN(x.Keys, x.N, x.Offset, x.schema)
		}, wireGather, nil, in), nil
	case *StreamRank:
		return b.buildStreamRank(x) // bind_rank.go
	case *Limit:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		detail := fmt.Sprintf("%d", x.N)
		if x.N < 0 {
			detail = "ALL"
		}
		if x.Offset > 0 {
			detail += fmt.Sprintf(" OFFSET %d", x.Offset)
		}
		return b.op("Limit", detail, func() exec.Operator { return ops.NewLimit(x.N, x.Offset) }, wireGather, nil, in), nil
	case *Union:
		var ins []*Stage
		for _, c := range x.Inputs {
			s, err := b.build(c)
			if err != nil {
				return nil, err
			}
			ins = append(ins, s)
		}
		return b.op("UnionAll", fmt.Sprintf("%d inputs", len(ins)), func() exec.Operator { return ops.NewUnionAll(len(ins)) }, wireZip, nil, ins...), nil
	}
	return nil, fmt.Errorf("plan: cannot build %T", n)
}

// scanConjuncts compiles the scan's pushed-down conjuncts (over the
// table's columns) over its output columns. A conjunct reading a column
// the scan no longer outputs is left out: the Filter above still has it.
func scanConjuncts(x *Scan) []connectors.Conjunct {
	m := make([]int, x.Table.Schema().NumFields())
	for i := range m {
		m[i] = -1
	}
	for i, c := range x.Columns {
		m[c] = i
	}
	var out []connectors.Conjunct
	for _, p := range x.Pred {
		e, err := Remap(p, m)
		if err != nil {
			continue
		}
		out = append(out, connectors.Conjunct{Expr: e.Compile(), Columns: Columns(e)})
	}
	return out
}

// sortKeysText is ORDER BY keys in SQL terms, for EXPLAIN.
func sortKeysText(schema *arrow.Schema, keys []ops.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = schema.Field(k.Col).Name
		if k.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

// isIdentity reports whether p passes its input through unchanged: every
// input column, in order, by reference, under the same name.
func isIdentity(p *Project) bool {
	in := p.Input.Schema()
	if len(p.Exprs) != len(in.Fields()) {
		return false
	}
	for i, e := range p.Exprs {
		c, ok := e.(*ColRef)
		if !ok || c.Index != i || p.schema.Field(i).Name != in.Field(i).Name {
			return false
		}
	}
	return true
}

// finalAggs returns the aggregates that merge partial results of x's
// aggregates (COUNT and SUM add up, MIN and MAX take the extreme, bool_and
// and bool_or combine the partial answers), reading the partial output
// where group keys come first. It reports false when an aggregate does not
// decompose that way (AVG, DISTINCT, and the variance family, whose
// partials would need their count and mean besides their result).
func finalAggs(x *Aggregate) ([]ops.AggSpec, bool) {
	g := len(x.GroupCols)
	out := make([]ops.AggSpec, len(x.Aggs))
	for i, a := range x.Aggs {
		if a.Distinct {
			return nil, false
		}
		f := a
		f.Col = g + i
		switch a.Func {
		case "count", "count_star":
			f.Func = "sum" // of the partial counts, INT64 like the count
		case "sum", "min", "max", "bool_and", "bool_or", "every":
		default:
			return nil, false
		}
		out[i] = f
	}
	return out, true
}

// streamJoin plans a streaming join: keyed by the join keys on both
// inputs, its EXPLAIN detail naming what bounds the state.
func (b *builder) streamJoin(x *Join, l, r *Stage) *Stage {
	detail := x.Kind.String() + " ON " + x.Cond
	if tb := x.Time; tb != nil {
		lc, rc := x.Left.Schema().Field(tb.LeftCol).Name, x.Right.Schema().Field(tb.RightCol).Name
		bound := func(has bool, v int64, open string) string {
			if !has {
				return open
			}
			return time.Duration(v * 1000).String()
		}
		detail += fmt.Sprintf("; state expires with the watermark: right.%s - left.%s in [%s, %s]",
			rc, lc, bound(tb.HasLo, tb.Lo, "-inf"), bound(tb.HasHi, tb.Hi, "+inf"))
	} else if ttl := b.opts.StateTTL; ttl > 0 {
		detail += fmt.Sprintf("; state: rows expire %s after they arrive (table.exec.state.ttl)", ttl)
	} else {
		detail += "; state: unbounded"
	}
	spec := ops.StreamJoinSpec{Type: opsJoinType(x.Kind), LeftKeys: x.LeftKeys, RightKeys: x.RightKeys,
		LeftOp: x.LeftOp, RightOp: x.RightOp, Time: x.Time, Out: x.schema}
	if x.Time == nil {
		// A time-bounded join's state expires with the watermark instead.
		spec.StateTTL = b.opts.StateTTL
	}
	mem := b.opts.Mem
	return b.op("StreamJoin", detail, func() exec.Operator { return ops.NewStreamJoin(spec, mem) },
		wireKeyed, [][]int{x.LeftKeys, x.RightKeys}, l, r)
}
