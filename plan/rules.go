package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Rule is one named rewrite of the logical plan. The list below runs in
// order, once; Why says why each sits where it does.
type Rule struct {
	Name  string
	Why   string
	Apply func(n Node, o *RuleOptions) (Node, error)
}

// RuleOptions carry what rules may depend on besides the plan.
type RuleOptions struct {
	// Streaming: the session plans every input as a stream.
	Streaming bool
	// Parallelism is the number of parallel subtasks the plan will run at.
	Parallelism int
	// BroadcastRows is the largest build side a join broadcasts (0: never;
	// SET 'parallelism.broadcast-rows').
	BroadcastRows int64
	// Trace records the plan after each rule that changed it (EXPLAIN
	// VERBOSE); otherwise Optimize formats nothing.
	Trace bool
}

// Rules is the ordered rule list.
var Rules = []Rule{
	{"decorrelate-subqueries", "first: every later rule then sees only joins, filters and projections",
		func(n Node, _ *RuleOptions) (Node, error) { return decorrelate(n) }},
	{"fold-constants", "before predicates are placed, so a constant condition is one value, not an expression",
		func(n Node, _ *RuleOptions) (Node, error) { return foldPlan(n) }},
	{"decompose-aggregates", "early, so the joins it adds get their keys like any other, and before the two-phase rule, at parallelism above one: AVG of numbers (DECIMAL too) becomes SUM / COUNT and a query whose aggregates are all DISTINCT over one column aggregates the distinct pairs, so both split in two phases",
		decomposeAggregates},
	{"push-down-filters", "after decorrelation, whose joins need the same treatment: conjuncts move below projections, aggregates (on their keys), unions and into join inputs, a WHERE conjunct over two sides of a join onto that join (the keys of a comma FROM list), and scans learn what they may skip",
		func(n Node, _ *RuleOptions) (Node, error) { return pushDownFilters(n) }},
	{"push-down-semi-joins", "after filters, before join order: a SEMI or ANTI join filters rows by their own values, so it moves below the inner joins onto the input its condition reads, and the reordered cluster sees that input already cut",
		func(n Node, _ *RuleOptions) (Node, error) { return pushSemiJoins(n) }},
	{"order-joins", "after filters sit on the joins they connect and before keys are split: each cluster of inner joins is reordered so no join is a needless cross product and the smaller input of each is the one built",
		func(n Node, _ *RuleOptions) (Node, error) { return orderJoins(n) }},
	{"reduce-aggregates-by-join-keys", "after join order, before keys are split: a GROUP BY under one side of a join whose keys meet the other side (a decorrelated scalar subquery) first keeps only the input rows whose keys appear in a filtered scan of that side, so Q17 aggregates 185 parts' rows, not 200,000 parts'",
		func(n Node, _ *RuleOptions) (Node, error) { return reduceAggregates(n) }},
	{"extract-join-keys", "after every condition sits on its join: each splits into equi-keys (computed ones projected under their side), a residual, and for a streaming join an event-time bound with the rest filtered above",
		func(n Node, _ *RuleOptions) (Node, error) { return extractJoinKeys(n) }},
	{"fold-sum-of-shifts", "before pruning, which then drops the argument columns no aggregate reads: SUM(x + k) of a narrow integer x is SUM(x) + k * COUNT(x), and equal aggregates merge (ClickBench q29's 90 shifted sums are one SUM and one COUNT)",
		foldSumOfShifts},
	{"prune-columns", "last rewrite: every operator, scan included, carries only the columns something above reads, so the filters placed above are already counted",
		func(n Node, _ *RuleOptions) (Node, error) { return pruneColumns(n) }},
	{"two-phase-aggregation", "after pruning, over the final aggregate inputs: aggregates whose partials merge run per subtask first, then merged after the exchange",
		twoPhaseAggregates},
	{"choose-broadcast-joins", "after join order and keys are final: a join whose build side is a small enough scan sends it to every probe subtask instead of shuffling both",
		chooseBroadcasts},
	{"check-invariants", "a check, not a rewrite: nothing of the binder's is left and every schema agrees with its input",
		func(n Node, _ *RuleOptions) (Node, error) { return n, checkInvariants(n) }},
}

// Step is the plan after a rule that changed it (EXPLAIN VERBOSE).
type Step struct {
	Rule string
	Plan string
}

// Optimize runs the rules over a bound plan. It returns the final plan
// and, for EXPLAIN VERBOSE, the plan as bound and after each rule that
// changed it.
func Optimize(n Node, o RuleOptions) (out Node, steps []Step, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error while optimizing: %v", r)
		}
	}()
	var last string
	if o.Trace {
		last = Format(n)
		steps = append(steps, Step{Rule: "bound", Plan: last})
	}
	for _, r := range Rules {
		next, err := r.Apply(n, &o)
		if err != nil {
			return nil, steps, err
		}
		n = next
		if !o.Trace {
			continue
		}
		if text := Format(n); text != last {
			steps = append(steps, Step{Rule: r.Name, Plan: text})
			last = text
		}
	}
	return n, steps, nil
}

// volatile functions give another value per call: never folded.
var volatile = map[string]bool{"fn:random": true, "fn:rand": true, "fn:uuid": true, "fn:gen_random_uuid": true}

// fold evaluates e's sub-expressions over constants once.
func fold(e Expr) Expr {
	out, err := Transform(e, func(x Expr) (Expr, error) {
		c, ok := x.(*Call)
		if !ok || volatile[c.Op] || len(c.Args) == 0 {
			return x, nil
		}
		for _, a := range c.Args {
			if _, isConst := a.(*Const); !isConst {
				return x, nil
			}
		}
		v, err := c.Compile().EvalRow(nil)
		if err != nil {
			return x, nil // the error shows when the query runs, as written
		}
		return NewConst(v, c.Type()), nil
	})
	if err != nil {
		return e
	}
	return out
}

// foldPlan folds every expression of the plan; a filter on a constant TRUE
// goes.
func foldPlan(n Node) (Node, error) {
	return rewritePlan(n, func(x Node) (Node, error) {
		es := exprsOf(x)
		if len(es) == 0 {
			return x, nil
		}
		changed := false
		out := make([]Expr, len(es))
		for i, e := range es {
			out[i] = fold(e)
			changed = changed || out[i] != e
		}
		if changed {
			x = withExprs(x, out)
		}
		if f, ok := x.(*Filter); ok {
			if c, ok := f.Pred.(*Const); ok && c.Value() == true {
				return f.Input, nil
			}
		}
		return x, nil
	})
}

// checkInvariants fails on what must not reach the physical plan.
func checkInvariants(n Node) error {
	var err error
	visitPlan(n, func(x Node) {
		for _, e := range exprsOf(x) {
			Visit(e, func(y Expr) bool {
				switch v := y.(type) {
				case *SubqueryExpr, *OuterRef, *aggCall, *winCall, *groupingCall, *windowAux:
					if err == nil {
						err = fmt.Errorf("internal error: %s (%T) was not planned", v.String(), v)
					}
				}
				return true
			})
		}
		if err != nil {
			return
		}
		switch v := x.(type) {
		case *Filter:
			if v.Pred.Type().ID() != arrow.BOOL && v.Pred.Type().ID() != arrow.NULL {
				err = fmt.Errorf("internal error: a filter on %s", v.Pred.Type())
			}
		case *Project:
			if len(v.Exprs) != v.schema.NumFields() {
				err = errors.New("internal error: a projection's schema does not match its expressions")
			}
		case *Join:
			if v.On != nil {
				err = fmt.Errorf("internal error: join condition %s was not placed", v.On)
			}
			if len(v.LeftKeys) != len(v.RightKeys) {
				err = errors.New("internal error: join keys do not pair up")
			}
		}
	})
	return err
}

// Format renders a logical plan as an indented tree, one node a line. A
// node with several parents (a shared CTE) is printed once and named by
// its number where it appears again.
func Format(n Node) string {
	var sb strings.Builder
	parents := map[Node]int{}
	visitPlan(n, func(x Node) {
		for _, c := range x.Children() {
			parents[c]++
		}
	})
	ids := map[Node]int{}
	var walk func(n Node, depth int)
	walk = func(n Node, depth int) {
		indent := strings.Repeat("  ", depth)
		if id, ok := ids[n]; ok {
			fmt.Fprintf(&sb, "%s(shared #%d)\n", indent, id)
			return
		}
		label := ""
		if parents[n] > 1 {
			ids[n] = len(ids) + 1
			label = fmt.Sprintf("#%d ", ids[n])
		}
		fmt.Fprintf(&sb, "%s%s%s\n", indent, label, describe(n))
		for _, c := range n.Children() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return sb.String()
}

// describe is one line naming a node and its arguments in SQL terms.
func describe(n Node) string {
	cols := func(s *arrow.Schema, idx []int) string {
		var parts []string
		for _, i := range idx {
			if i >= 0 && i < s.NumFields() {
				parts = append(parts, s.Field(i).Name)
			} else {
				parts = append(parts, fmt.Sprintf("$%d", i))
			}
		}
		return strings.Join(parts, ", ")
	}
	exprs := func(es []Expr, s *arrow.Schema) string {
		parts := make([]string, len(es))
		for i, e := range es {
			parts[i] = e.String()
			if s != nil && s.Field(i).Name != parts[i] && !internalName(s.Field(i).Name) {
				parts[i] += " AS " + s.Field(i).Name
			}
		}
		return strings.Join(parts, ", ")
	}
	switch x := n.(type) {
	case *Scan:
		s := fmt.Sprintf("Scan %s [%s]", x.TableName, cols(x.Table.Schema(), x.Columns))
		if len(x.Filters) > 0 {
			var fs []string
			for _, f := range x.Filters {
				fs = append(fs, f.Format(x.Table.Schema().Field(f.Column).Name))
			}
			s += " skip by: " + strings.Join(fs, " AND ")
		}
		return s
	case *Values:
		return fmt.Sprintf("Values %d row(s) [%s]", len(x.Rows), strings.Join(fieldNames(x.schema), ", "))
	case *Filter:
		return "Filter " + x.Pred.String()
	case *Project:
		return "Project " + exprs(x.Exprs, x.schema)
	case *Aggregate:
		var parts []string
		if len(x.GroupCols) > 0 {
			parts = append(parts, "GROUP BY "+cols(x.Input.Schema(), x.GroupCols))
		}
		parts = append(parts, x.AggText...)
		name := "Aggregate "
		if x.Updating {
			name = "UpdatingAggregate "
		}
		if x.TwoPhase {
			name = "Aggregate (two-phase) "
		}
		return name + strings.Join(parts, ", ")
	case *Join:
		s := fmt.Sprintf("Join %s", x.Kind)
		if x.Stream {
			s = fmt.Sprintf("StreamJoin %s", x.Kind)
		}
		if x.NullAware {
			s += " null-aware"
		}
		if x.On != nil {
			s += " ON " + x.On.String()
		}
		if len(x.LeftKeys) > 0 {
			var ks []string
			for i := range x.LeftKeys {
				op := "="
				if i < len(x.NullSafe) && x.NullSafe[i] {
					op = "IS NOT DISTINCT FROM"
				}
				ks = append(ks, fmt.Sprintf("%s %s %s", x.Left.Schema().Field(x.LeftKeys[i]).Name, op, x.Right.Schema().Field(x.RightKeys[i]).Name))
			}
			s += " keys: " + strings.Join(ks, ", ")
		}
		if x.Residual != nil {
			s += " residual: " + x.Residual.String()
		}
		if x.Broadcast > 0 {
			s += fmt.Sprintf(" (build side of %d rows broadcast)", x.Broadcast)
		}
		return s
	case *Sort:
		s := "Sort " + sortKeysText(x.Schema(), x.Keys)
		if x.Limit >= 0 {
			s += fmt.Sprintf(" LIMIT %d", x.Limit)
		}
		return s
	case *UpdatingTopN:
		return fmt.Sprintf("UpdatingTopN %s LIMIT %d OFFSET %d", sortKeysText(x.Input.Schema(), x.Keys), x.N, x.Offset)
	case *StreamRank:
		return "StreamRank " + x.detail()
	case *Limit:
		return fmt.Sprintf("Limit %d OFFSET %d", x.N, x.Offset)
	case *Union:
		return fmt.Sprintf("UnionAll %d inputs", len(x.Inputs))
	case *SetOp:
		op := "Except"
		if x.Intersect {
			op = "Intersect"
		}
		if x.All {
			op += " ALL"
		}
		return op
	case *WindowFuncs:
		var fs []string
		for _, f := range x.Funcs {
			fs = append(fs, f.Text)
		}
		s := fmt.Sprintf("Window PARTITION BY [%s] ORDER BY [%s]: %s", cols(x.Input.Schema(), x.PartitionBy),
			sortKeysText(x.Input.Schema(), x.OrderBy), strings.Join(fs, ", "))
		if x.EventTime {
			s += " (by event time, as the watermark passes)"
		}
		return s
	case *Expand:
		return fmt.Sprintf("Expand %d grouping sets of [%s]", len(x.Sets), cols(x.Input.Schema(), x.KeyCols))
	case *WatermarkAssign:
		return "WatermarkAssign " + x.Text
	case *WindowTable:
		return "WindowTable " + x.Call
	case *WindowAggregate:
		return fmt.Sprintf("WindowAggregate GROUP BY %s, %s: %s", cols(x.Input.Schema(), x.GroupCols), x.Spec, strings.Join(x.AggText, ", "))
	}
	return fmt.Sprintf("%T", n)
}

// internalName reports a column name the binder made up for plumbing (an
// aggregate's pre-projected argument, __agg0): EXPLAIN leaves such an alias
// out, since no user wrote it and nothing the user reads refers to it.
func internalName(name string) bool { return strings.HasPrefix(name, "__") }
