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
	Exec     *exec.Stage
	Caps     exec.Capabilities
	Output   Output
	Gate     *Gate // set for operators that can emit born columnar
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
}

type builder struct {
	g      *exec.Graph
	opts   BuildOptions
	stages []*Stage
}

// Build plans root into a graph whose results go to sink (a Collect).
func Build(root Node, sink exec.Operator, opts BuildOptions) (*Physical, error) {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
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
	st := b.g.AddOperator(name, sink, child.Exec)
	top := b.add(&Stage{Op: name, Exec: st, Children: []*Stage{child}, Caps: sink.Capabilities()})
	top.Output = OutRows
	b.gates(top)
	return &Physical{Graph: b.g, Root: top, Stages: b.stages, Schema: root.Schema(), Bounded: Bounded(root), Options: opts.Exec}, nil
}

func (b *builder) add(s *Stage) *Stage {
	s.ID = s.Exec.ID
	b.stages = append(b.stages, s)
	return s
}

func (b *builder) op(name, detail string, op exec.Operator, children ...*Stage) *Stage {
	ins := make([]*exec.Stage, len(children))
	for i, c := range children {
		ins[i] = c.Exec
	}
	st := b.g.AddOperator(name, op, ins...)
	s := b.add(&Stage{Op: name, Detail: detail, Exec: st, Children: children, Caps: op.Capabilities()})
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

func (b *builder) build(n Node) (*Stage, error) {
	mem := b.opts.Mem
	switch x := n.(type) {
	case *Scan:
		src, err := x.Table.Open(connectors.ScanSpec{Columns: x.Columns, Filters: x.Filters, Progress: b.opts.Progress})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x.TableName, err)
		}
		full := x.Table.Schema()
		s := &Stage{Op: "Scan", Detail: fmt.Sprintf("%s [%s]", x.TableName, x.Table.Describe()), Caps: src.Capabilities(), Source: src}
		for _, c := range x.Columns {
			s.Columns = append(s.Columns, full.Field(c).Name)
		}
		for _, f := range x.Filters {
			s.Filters = append(s.Filters, f.Format(full.Field(f.Column).Name))
		}
		s.Exec = b.g.AddSource("Scan "+x.TableName, src)
		if s.Caps.EmitsColumnar {
			s.Output = OutBornColumnar
			s.Gate = &Gate{Columnar: true, Reason: ReasonSourceColumnar}
		} else {
			s.Output = OutRows
		}
		return b.add(s), nil
	case *Values:
		src := ops.NewValues(x.schema, x.Rows)
		s := &Stage{Op: "Values", Detail: fmt.Sprintf("%d row(s)", len(x.Rows)), Caps: src.Capabilities(), Output: OutRows, Source: src}
		s.Exec = b.g.AddSource("Values", src)
		return b.add(s), nil
	case *Filter:
		in, err := b.build(x.Input)
		if err != nil {
			return nil, err
		}
		return b.op("Filter", x.Pred.String(), ops.NewFilter(x.Pred, mem), in), nil
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
		return b.op("Project", strings.Join(parts, ", "), ops.NewProject(x.Exprs, x.schema, mem), in), nil
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
		return b.op("HashAggregate", strings.Join(parts, ", "), ops.NewHashAggregate(x.GroupCols, x.Aggs, x.schema, mem), in), nil
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
		return b.op("HashJoin", kind+" ON "+x.Cond, ops.NewHashJoin(x.Type, x.LeftKeys, x.RightKeys, x.schema, mem), l, r), nil
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
		return b.op(name, detail, ops.NewSort(x.Keys, x.Limit, mem), in), nil
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
		return b.op("Limit", detail, ops.NewLimit(x.N, x.Offset), in), nil
	case *Union:
		var ins []*Stage
		for _, c := range x.Inputs {
			s, err := b.build(c)
			if err != nil {
				return nil, err
			}
			ins = append(ins, s)
		}
		return b.op("UnionAll", fmt.Sprintf("%d inputs", len(ins)), ops.NewUnionAll(len(ins)), ins...), nil
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
		setter, ok := s.Exec.Op.(exec.ColumnarOutputSetter)
		if !ok {
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
		setter.SetColumnarOutput(g.Columnar)
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
