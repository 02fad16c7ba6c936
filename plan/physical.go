package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
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
	ReasonChangelogOutput         = "changelog-output"
)

// Gate is the planner's decision on one operator's output.
type Gate struct {
	Columnar bool
	Reason   string // one of the Reason* codes
	// Cause names the consumers that decided, in SQL terms, with the
	// pass-through operators crossed to reach them ("UpdatingAggregate
	// through Filter, Project"): the row-only one for a hold-back.
	Cause string
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
	// Dictionary are the columns a scan hands out dictionary-encoded
	// (see dictionaries).
	Dictionary []string
}

// Physical is an executable plan.
type Physical struct {
	Graph  *exec.Graph
	Root   *Stage // the result sink
	Stages []*Stage
	// Passes are the physical passes in order with what each decided.
	Passes  []PassStep
	Schema  *arrow.Schema
	Bounded bool
	// Order is the rank order of an updating top-n result, by the result's
	// columns (nil when the result has none a display should keep).
	Order []ops.SortKey
	// Key is the upsert key of an updating result (see resultKey), by the
	// result's columns; nil when unknown.
	Key     []int
	Options exec.Options
	// EnvSwitches are the switches of Options that came from the
	// environment (the rest came from SET), so EXPLAIN names the right one.
	EnvSwitches exec.Options
	// Budget is the query's memory budget (nil: unlimited), which the
	// runner puts in the context the operators see.
	Budget *exec.MemoryBudget
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
	// StateTTL is 'table.exec.state.ttl': how long a regular streaming
	// join holds a row (0: forever).
	StateTTL time.Duration
	// FixedSplits gives each part of a split scan a fixed share of the
	// input (row group i to part i mod n) instead of a queue the parts
	// take ranges from as they run: slower when cores run unevenly, but
	// the same batches reach the same subtasks on every run
	// (SET 'parallelism.shared-ranges' = 'off' or CLINK_FIXED_SPLITS=1).
	FixedSplits bool
	// Budget is the query's memory budget ('execution.memory-limit'; nil:
	// unlimited).
	Budget *exec.MemoryBudget
}

type builder struct {
	g    *exec.Graph
	opts BuildOptions
	// ordered are the scans whose rows feed an event-time watermark: each
	// subtask must read its part in file order (see orderedScans).
	ordered map[*Scan]bool
	// inOrder are the scans under a LIMIT without ORDER BY: one subtask
	// reads them in file order (see limitScans).
	inOrder map[*Scan]bool
	stages  []*Stage
	schemas map[*Stage]*arrow.Schema
	// built is the stage of each node already planned (shared nodes).
	built map[Node]*Stage
}

// Build plans root into a graph whose results go to sink (a Collect).
func Build(root Node, sink exec.Operator, opts BuildOptions) (*Physical, error) {
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	b := &builder{g: exec.NewGraph(opts.Exec), opts: opts, ordered: orderedScans(root), inOrder: limitScans(root)}
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
	passes := b.runPasses(top)
	return &Physical{Graph: b.g, Root: top, Stages: b.stages, Passes: passes, Schema: root.Schema(), Bounded: Bounded(root), Order: resultOrder(root), Key: resultKey(root), Options: opts.Exec, EnvSwitches: opts.EnvSwitches, Budget: opts.Budget}, nil
}

// orderedScans finds the scans below a WATERMARK. A subtask's watermark
// follows the largest event time it has read, so a subtask that went back
// in the file (a shared range queue lets a part take a range before one it
// read) would make its own earlier rows late. Those scans keep fixed
// splits, where every subtask reads forward.
func orderedScans(root Node) map[*Scan]bool {
	var out map[*Scan]bool
	var walk func(n Node, under bool)
	walk = func(n Node, under bool) {
		if _, ok := n.(*WatermarkAssign); ok {
			under = true
		}
		if s, ok := n.(*Scan); ok && under {
			if out == nil {
				out = map[*Scan]bool{}
			}
			out[s] = true
		}
		for _, c := range n.Children() {
			walk(c, under)
		}
	}
	walk(root, false)
	return out
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
	// wireBroadcast: one instance per instance of child 0, fed by it;
	// every other port is fed by every instance of its child (a broadcast
	// join's build side).
	wireBroadcast
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
	case wireBroadcast:
		p = len(children[0].Instances)
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
		case wireBroadcast:
			if k == 0 {
				for i, in := range c.Instances {
					b.g.Connect(in, s.Instances[i], k)
				}
				continue
			}
			for _, in := range c.Instances {
				for _, to := range s.Instances {
					b.g.Connect(in, to, k)
				}
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

// gates decides, for every operator that can emit born-columnar output,
// whether it does: only when every consumer that decides ingests columnar
// and no switch is set. The consumer that decides is the first one down
// each path that does not pass batches through (Filter, Project, Limit,
// Exchange, UnionAll and any operator whose Capabilities say
// PassesThrough): a columnar batch crosses those as it is, so a row-only
// operator behind them would materialise every batch the producer built
// in Arrow, which costs more than never building it (seed 000). A stage
// whose output carries row kinds (Capabilities.ChangelogOutput) is rows by
// construction. Capabilities come from the operators themselves (the same
// method exec.Dispatch reads), so planner and runtime cannot disagree.
func (b *builder) gates(root *Stage) {
	consumers := map[*Stage][]*Stage{}
	seen := map[*Stage]bool{}
	var order []*Stage
	var walk func(s *Stage)
	walk = func(s *Stage) {
		if seen[s] {
			return
		}
		seen[s] = true
		for _, c := range s.Children {
			consumers[c] = append(consumers[c], s)
			walk(c)
		}
		order = append(order, s)
	}
	walk(root)
	for _, s := range order {
		b.gate(s, deciders(s, consumers))
	}
}

// gate sets s's Gate and Output from the consumers that decide.
func (b *builder) gate(s *Stage, decide []decider) {
	if s.Source != nil || s.Exec == nil || s.Exec.Op == nil {
		return // a source's output is its own (see buildNode's Scan)
	}
	if s.Caps.ChangelogOutput {
		s.Gate, s.Output = &Gate{Reason: ReasonChangelogOutput}, OutRows
		return
	}
	if !s.Caps.EmitsColumnar {
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
	default:
		g.Columnar, g.Reason = true, ReasonConsumersIngestColumnar
		var names []string
		for _, d := range decide {
			if !d.stage.Caps.IngestsColumnar {
				g.Columnar, g.Reason, names = false, ReasonConsumerIngestsRows, []string{d.String()}
				break
			}
			names = append(names, d.String())
		}
		if len(decide) == 0 {
			g.Columnar, g.Reason = false, ReasonConsumerIngestsRows
		}
		g.Cause = strings.Join(names, "; ")
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

// decider is a consumer that decides a producer's gate, with the
// pass-through stages between them.
type decider struct {
	stage   *Stage
	through []*Stage
}

// String names the decider for EXPLAIN: "UpdatingAggregate through
// Filter, Project".
func (d decider) String() string {
	if len(d.through) == 0 {
		return d.stage.Op
	}
	names := make([]string, len(d.through))
	for i, t := range d.through {
		names[i] = t.Op
	}
	return d.stage.Op + " through " + strings.Join(names, ", ")
}

// deciders are the first consumers down every path from s that do not
// pass batches through. A pass-through stage nothing consumes decides
// itself.
func deciders(s *Stage, consumers map[*Stage][]*Stage) []decider {
	var out []decider
	var down func(s *Stage, through []*Stage)
	down = func(s *Stage, through []*Stage) {
		for _, c := range consumers[s] {
			if c.Caps.PassesThrough && len(consumers[c]) > 0 {
				down(c, append(through[:len(through):len(through)], c))
				continue
			}
			out = append(out, decider{stage: c, through: through})
		}
	}
	down(s, nil)
	return out
}
