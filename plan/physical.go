package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/exec/shuffle"
)

// Output says what a stage emits.
type Output string

const (
	OutBornColumnar Output = "born-columnar" // builds Arrow output itself
	OutRows         Output = "rows"          // emits row batches
	OutPassThrough  Output = "pass-through"  // emits its input's representation
)

// Gate reason codes. They are stable: EXPLAIN prints them and tests and
// users match on them.
const (
	ReasonConsumersIngestColumnar = "consumers-ingest-columnar"
	ReasonConsumerIngestsRows     = "consumer-ingests-rows"
	ReasonDisabledOutput          = "disabled: CLINK_DISABLE_COLUMNAR_OUTPUT"
	ReasonDisabledColumnar        = "disabled: CLINK_DISABLE_COLUMNAR"
	ReasonSourceColumnar          = "source-born-columnar"
)

// Gate is the planner's decision on one operator's output.
type Gate struct {
	Columnar bool
	Reason   string // one of the Reason* codes
	Cause    string // the consumer that caused a hold-back, in SQL terms
}

// Stage is one physical stage with what EXPLAIN shows of it.
type Stage struct {
	ID       int
	Op       string // SQL-terms operator name: "Filter", "HashAggregate", ...
	Detail   string // arguments in SQL terms
	Children []*Stage
	// Exec is the stage's first (often only) instance; Instances are all
	// of them, one per parallel subtask.
	Exec      *exec.Stage
	Instances []*exec.Stage
	Caps      exec.Capabilities
	Output    Output
	Gate      *Gate // set for operators that can emit born columnar
	// Parallelism is the number of instances.
	Parallelism int
	// Scan pushdown, for sources.
	Columns []string
	Filters []string
	Source  exec.Source
}

// Physical is an executable plan.
type Physical struct {
	Graph   *exec.Graph
	Root    *Stage // the result sink
	Stages  []*Stage
	Schema  *arrow.Schema
	Bounded bool
	Options exec.Options
	// EnvSwitches are the switches of Options that came from the
	// environment (the rest came from SET), so EXPLAIN names the right one.
	EnvSwitches exec.Options
}

// BuildOptions configure physical planning.
type BuildOptions struct {
	Exec     exec.Options
	Mem      memory.Allocator
	Progress *exec.Progress
	// EnvSwitches says which A/B switches came from the environment (for
	// the gate reason); the rest came from SET.
	EnvSwitches exec.Options
	// SinkName names the final stage in EXPLAIN ("ResultSink" by default;
	// INSERT INTO names the table's sink, e.g. "Sink print 'out'").
	SinkName string
	// Parallelism is the number of parallel subtasks for scans, stateless
	// and keyed stages (0 or 1: one). ORDER BY, LIMIT, global aggregates
	// and the sink gather into one instance.
	Parallelism int
}

type builder struct {
	g       *exec.Graph
	opts    BuildOptions
	stages  []*Stage
	schemas map[*Stage]*arrow.Schema
}

// Build plans root into a graph whose results go to sink (a Collect).
func Build(root Node, sink exec.Operator, opts BuildOptions) (*Physical, error) {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	b := &builder{g: exec.NewGraph(opts.Exec), opts: opts}
	child, err := b.build(root)
	if err != nil {
		return nil, err
	}
	name := opts.SinkName
	if name == "" {
		name = "ResultSink"
	}
	top := b.op(name, "", func() exec.Operator { return sink }, wireGather, nil, child)
	top.Output = OutRows
	b.gates(top)
	return &Physical{Graph: b.g, Root: top, Stages: b.stages, Schema: root.Schema(), Bounded: Bounded(root), Options: opts.Exec, EnvSwitches: opts.EnvSwitches}, nil
}

func (b *builder) add(s *Stage) *Stage {
	s.Exec = s.Instances[0]
	s.ID = s.Exec.ID
	b.stages = append(b.stages, s)
	return s
}

// wiring says how a stage's instances are fed by its children's.
type wiring int

const (
	// wireParallel: one instance per instance of the (single) child.
	wireParallel wiring = iota
	// wireGather: one instance; port k is fed by every instance of child k.
	wireGather
	// wireKeyed: Parallelism instances; child k's rows are routed by
	// keys[k] through an exchange per child instance (hash shuffle).
	wireKeyed
	// wireZip: instance i's port k is fed by instance i of child k (UNION
	// ALL of inputs with the same parallelism).
	wireZip
)

// op adds a stage of instances made by mk, wired to children.
func (b *builder) op(name, detail string, mk func() exec.Operator, w wiring, keys [][]int, children ...*Stage) *Stage {
	p := b.opts.Parallelism
	switch w {
	case wireParallel:
		p = len(children[0].Instances)
	case wireGather:
		p = 1
	case wireKeyed:
		if p == 1 {
			w = wireGather
		}
	case wireZip:
		p = len(children[0].Instances)
		for _, c := range children {
			if len(c.Instances) != p {
				w, p = wireGather, 1
			}
		}
	}
	s := &Stage{Op: name, Detail: detail, Children: children}
	for i := 0; i < p; i++ {
		op := mk()
		if i == 0 {
			s.Caps = op.Capabilities()
		}
		st := b.g.AddOperatorPorts(name, op, len(children))
		s.Instances = append(s.Instances, st)
	}
	for k, c := range children {
		switch w {
		case wireParallel, wireZip:
			for i, in := range c.Instances {
				b.g.Connect(in, s.Instances[i], k)
			}
		case wireGather:
			for _, in := range c.Instances {
				b.g.Connect(in, s.Instances[0], k)
			}
		case wireKeyed:
			ex := b.exchange(c, keys[k], p)
			s.Children[k] = ex
			for _, in := range ex.Instances {
				for _, to := range s.Instances {
					// Connect order is target order: exchange target t is
					// instance t of this stage.
					b.g.Connect(in, to, k)
				}
			}
		}
	}
	b.add(s)
	s.Parallelism = len(s.Instances)
	switch {
	case s.Caps.EmitsColumnar:
		s.Output = OutRows // until the gate says otherwise
	case s.Caps.PassesThrough:
		s.Output = OutPassThrough
	default:
		s.Output = OutRows
	}
	return s
}

// exchange adds a hash-partitioning stage after every instance of c,
// routing rows by keys to targets instances.
func (b *builder) exchange(c *Stage, keys []int, targets int) *Stage {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = c.Exec.Name
		if f := b.schemaOf(c); f != nil && k < len(f.Fields()) {
			names[i] = f.Field(k).Name
		}
	}
	s := &Stage{Op: "Exchange", Detail: fmt.Sprintf("hash(%s) to %d subtasks", strings.Join(names, ", "), targets),
		Children: []*Stage{c}}
	for _, in := range c.Instances {
		op := shuffle.NewExchange(keys, b.opts.Mem)
		s.Caps = op.Capabilities()
		st := b.g.AddOperatorPorts("Exchange", op, 1)
		b.g.Connect(in, st, 0)
		s.Instances = append(s.Instances, st)
	}
	b.add(s)
	s.Parallelism = len(s.Instances)
	s.Output = OutPassThrough
	return s
}

func (b *builder) schemaOf(s *Stage) *arrow.Schema { return b.schemas[s] }

// source adds a scan or another source stage with one instance per split.
func (b *builder) source(s *Stage, open func(split, splits int) (exec.Source, error)) (*Stage, error) {
	n := s.Parallelism
	if n < 1 {
		n = 1
	}
	for i := 0; i < n; i++ {
		src, err := open(i, n)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			s.Caps = src.Capabilities()
			s.Source = src
		}
		s.Instances = append(s.Instances, b.g.AddSource(s.Op, src))
	}
	b.add(s)
	return s, nil
}

func (b *builder) build(n Node) (*Stage, error) {
	s, err := b.buildNode(n)
	if err == nil {
		if b.schemas == nil {
			b.schemas = map[*Stage]*arrow.Schema{}
		}
		b.schemas[s] = n.Schema()
	}
	return s, err
}

func (b *builder) buildNode(n Node) (*Stage, error) {
	mem := b.opts.Mem
	switch x := n.(type) {
	case *Scan:
		full := x.Table.Schema()
		s := &Stage{Op: "Scan", Detail: fmt.Sprintf("%s [%s]", x.TableName, x.Table.Describe()), Parallelism: 1}
		if st, ok := x.Table.(connectors.SplitTable); ok && b.opts.Parallelism > 1 {
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
		s, err := b.source(s, func(split, splits int) (exec.Source, error) {
			spec := connectors.ScanSpec{Columns: x.Columns, Filters: x.Filters, Progress: b.opts.Progress}
			if splits > 1 {
				spec.Split, spec.Splits = split, splits
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
		return b.op("Filter", x.Pred.String(), func() exec.Operator { return ops.NewFilter(x.Pred, mem) }, wireParallel, nil, in), nil
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
		parts := make([]string, len(x.Exprs))
		for i, e := range x.Exprs {
			parts[i] = e.String()
			if name := x.schema.Field(i).Name; name != e.String() {
				parts[i] += " AS " + name
			}
		}
		return b.op("Project", strings.Join(parts, ", "), func() exec.Operator { return ops.NewProject(x.Exprs, x.schema, mem) }, wireParallel, nil, in), nil
	case *Aggregate:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		var parts []string
		if len(x.GroupCols) > 0 {
			var keys []string
			for _, g := range x.GroupCols {
				keys = append(keys, x.schema.Field(g).Name)
			}
			parts = append(parts, "GROUP BY "+strings.Join(keys, ", "))
		}
		parts = append(parts, x.AggText...)
		w := wireKeyed
		if len(x.GroupCols) == 0 {
			w = wireGather // one group: one instance sees every row
		}
		if final, ok := finalAggs(x); ok && b.opts.Parallelism > 1 && len(in.Instances) > 1 {
			// Two phases: each subtask aggregates what it scanned, and only
			// the partial results cross the exchange, so a GROUP BY with
			// few groups moves a few rows instead of every row.
			partial := b.op("HashAggregate", "partial: "+strings.Join(parts, ", "), func() exec.Operator {
				return ops.NewHashAggregate(x.GroupCols, x.Aggs, x.schema, mem)
			}, wireParallel, nil, in)
			b.schemas[partial] = x.schema
			keys := make([]int, len(x.GroupCols))
			for i := range keys {
				keys[i] = i
			}
			// Grouped: the partials are exchanged by key to parallel final
			// merges; one group (no GROUP BY): one final merge gathers them.
			return b.op("HashAggregate", "final: "+strings.Join(parts, ", "), func() exec.Operator {
				return ops.NewHashAggregate(keys, final, x.schema, mem)
			}, w, [][]int{keys}, partial), nil
		}
		return b.op("HashAggregate", strings.Join(parts, ", "), func() exec.Operator {
			return ops.NewHashAggregate(x.GroupCols, x.Aggs, x.schema, mem)
		}, w, [][]int{x.GroupCols}, in), nil
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
		kind := "INNER"
		if x.Type == ops.Left {
			kind = "LEFT"
		}
		return b.op("HashJoin", kind+" ON "+x.Cond, func() exec.Operator {
			return ops.NewHashJoin(x.Type, x.LeftKeys, x.RightKeys, x.schema, mem)
		}, wireKeyed, [][]int{x.LeftKeys, x.RightKeys}, l, r), nil
	case *Sort:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		var keys []string
		for _, k := range x.Keys {
			s := x.Schema().Field(k.Col).Name
			if k.Desc {
				s += " DESC"
			}
			keys = append(keys, s)
		}
		name, detail := "Sort", strings.Join(keys, ", ")
		if x.Limit >= 0 {
			name, detail = "TopN", fmt.Sprintf("%s LIMIT %d", detail, x.Limit)
		}
		return b.op(name, detail, func() exec.Operator { return ops.NewSort(x.Keys, x.Limit, mem) }, wireGather, nil, in), nil
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

// gates decides, for every operator that can emit born-columnar output,
// whether it does: only when its consumer ingests columnar and no switch is
// set. Capabilities come from the operators themselves (the same method
// exec.Dispatch reads), so planner and runtime cannot disagree.
func (b *builder) gates(root *Stage) {
	var walk func(s, consumer *Stage)
	walk = func(s, consumer *Stage) {
		for _, c := range s.Children {
			walk(c, s)
		}
		if s.Exec == nil || s.Exec.Op == nil || !s.Caps.EmitsColumnar {
			return
		}
		if _, ok := s.Exec.Op.(exec.ColumnarOutputSetter); !ok {
			return
		}
		g := &Gate{}
		switch {
		case b.opts.Exec.DisableColumnarOutput:
			g.Reason = ReasonDisabledOutput
			if !b.opts.EnvSwitches.DisableColumnarOutput {
				g.Reason = "disabled: SET 'columnar.output' = 'off'"
			}
		case b.opts.Exec.DisableColumnar:
			g.Reason = ReasonDisabledColumnar
			if !b.opts.EnvSwitches.DisableColumnar {
				g.Reason = "disabled: SET 'columnar' = 'off'"
			}
		case consumer == nil || !consumer.Caps.IngestsColumnar:
			g.Reason = ReasonConsumerIngestsRows
			if consumer != nil {
				g.Cause = consumer.Op
			}
		default:
			g.Columnar, g.Reason = true, ReasonConsumersIngestColumnar
		}
		for _, in := range s.Instances {
			in.Op.(exec.ColumnarOutputSetter).SetColumnarOutput(g.Columnar)
		}
		s.Gate = g
		if g.Columnar {
			s.Output = OutBornColumnar
		} else {
			s.Output = OutRows
		}
	}
	walk(root, nil)
}

// isIdentity reports whether p passes its input through unchanged: every
// input column, in order, by reference, under the same name.
func isIdentity(p *Project) bool {
	in := p.Input.Schema()
	if len(p.Exprs) != len(in.Fields()) {
		return false
	}
	for i, e := range p.Exprs {
		c, ok := e.(*expr.ColRef)
		if !ok || c.Index != i || p.schema.Field(i).Name != in.Field(i).Name {
			return false
		}
	}
	return true
}

// finalAggs returns the aggregates that merge partial results of x's
// aggregates (COUNT and SUM add up, MIN and MAX take the extreme), reading
// the partial output where group keys come first. It reports false when an
// aggregate does not decompose that way (AVG, DISTINCT).
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
		case "sum", "min", "max":
		default:
			return nil, false
		}
		out[i] = f
	}
	return out, true
}
