package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	_ "github.com/clink-sql/clink/connectors/nexmark"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/exec/shuffle"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

type discard struct{}

func (discard) Emit(context.Context, *exec.Batch) error    { return nil }
func (discard) EmitWatermark(context.Context, int64) error { return nil }

func sampleBatch(t *testing.T, mem memory.Allocator) *exec.Batch {
	rows := []exec.Row{{int64(1), "a", int64(10), 1.5, arrow.Timestamp(1000)}, {int64(2), nil, nil, 2.5, nil}, {nil, "c", int64(30), nil, arrow.Timestamp(3000)}}
	rec, err := exec.EncodeRows(mem, ops.SampleSchema, rows)
	if err != nil {
		t.Fatal(err)
	}
	return exec.NewColumnarBatch(rec)
}

// The planner's gates and the runtime's dispatch read the same answer: for
// every operator kind, what Capabilities says is what Dispatch does.
func TestPlannerAndRuntimeAgreeOnEveryOperatorKind(t *testing.T) {
	// Every operator kind the planner places: the relational operators and
	// the exchange, which lives with the shuffle.
	kinds := append(ops.Kinds(), ops.Kind{Name: "exchange", New: func(mem memory.Allocator) exec.Operator {
		return shuffle.NewExchange([]int{0}, mem)
	}})
	if len(kinds) < 8 {
		t.Fatalf("only %d operator kinds registered", len(kinds))
	}
	for _, k := range kinds {
		t.Run(k.Name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			op := k.New(mem)
			defer op.Close()
			caps := op.Capabilities()
			_, hook := op.(exec.ColumnarOperator)
			if caps.IngestsColumnar != hook {
				t.Fatalf("Capabilities().IngestsColumnar = %v but implements the hook = %v", caps.IngestsColumnar, hook)
			}
			_, setter := op.(exec.ColumnarOutputSetter)
			if caps.EmitsColumnar != setter {
				t.Fatalf("Capabilities().EmitsColumnar = %v but can be told to = %v", caps.EmitsColumnar, setter)
			}
			// What the planner would decide for a producer feeding this kind.
			consumer := &Stage{Op: k.Name, Caps: caps}
			producer := &Stage{Op: "HashAggregate", Caps: exec.Capabilities{EmitsColumnar: true},
				Exec: &exec.Stage{Op: ops.NewHashAggregate(nil, nil, arrow.NewSchema(nil, nil), mem)}}
			consumer.Children = []*Stage{producer}
			(&builder{}).gates(consumer)
			planned := producer.Gate.Columnar
			producer.Exec.Op.Close()

			b := sampleBatch(t, mem)
			took, err := exec.Dispatch(context.Background(), op, true, 0, b, discard{})
			b.Release()
			if err != nil {
				t.Fatal(err)
			}
			if took != planned {
				t.Fatalf("runtime took the columnar path = %v, planner decided born-columnar = %v", took, planned)
			}
			b = sampleBatch(t, mem)
			took, err = exec.Dispatch(context.Background(), op, false, 0, b, discard{})
			b.Release()
			if err != nil || took {
				t.Fatalf("columnar off: took=%v err=%v", took, err)
			}
		})
	}
}

// A producer whose consumer ingests rows is held back, with the reason and
// the consumer named.
func TestGateHoldsBackForRowConsumer(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	agg := ops.NewHashAggregate(nil, nil, arrow.NewSchema(nil, nil), mem)
	defer agg.Close()
	producer := &Stage{Op: "HashAggregate", Caps: agg.Capabilities(), Exec: &exec.Stage{Op: agg}}
	consumer := &Stage{Op: "print sink", Caps: exec.Capabilities{}, Children: []*Stage{producer}}
	(&builder{}).gates(consumer)
	g := producer.Gate
	if g == nil || g.Columnar || g.Reason != ReasonConsumerIngestsRows || g.Cause != "print sink" {
		t.Fatalf("gate = %+v", g)
	}
	if producer.Output != OutRows {
		t.Fatalf("output %s, want rows", producer.Output)
	}
}

func planQuery(t *testing.T, cat *Catalog, q string, opts BuildOptions) *Physical {
	t.Helper()
	n, err := bindTextWith(cat, q, RuleOptions{Parallelism: opts.Parallelism, BroadcastRows: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	sink := ops.NewCollect(func(context.Context, *exec.Batch) error { return nil })
	p, err := Build(n, sink, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testCatalog(t *testing.T) *Catalog {
	cat := NewCatalog()
	f, ok := connectors.Lookup("nexmark")
	if !ok {
		t.Fatal("no nexmark connector")
	}
	tbl, err := f(map[string]string{"table": "bid", "events.num": "1000"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Add(&Entry{Name: "b", Table: tbl, Connector: "nexmark"}, false); err != nil {
		t.Fatal(err)
	}
	return cat
}

func stageByOp(p *Physical, op string) *Stage {
	for _, s := range p.Stages {
		if s.Op == op {
			return s
		}
	}
	return nil
}

func TestGateReasons(t *testing.T) {
	cat := testCatalog(t)
	q := "SELECT channel, COUNT(*) FROM b GROUP BY channel"
	for _, tc := range []struct {
		name      string
		opts, env exec.Options
		columnar  bool
		reason    string
	}{
		{"on", exec.Options{}, exec.Options{}, true, ReasonConsumersIngestColumnar},
		{"env-output", exec.Options{DisableColumnarOutput: true}, exec.Options{DisableColumnarOutput: true}, false, ReasonDisabledOutput},
		{"set-output", exec.Options{DisableColumnarOutput: true}, exec.Options{}, false, "disabled: SET 'columnar.output' = 'off'"},
		{"env-columnar", exec.Options{DisableColumnar: true}, exec.Options{DisableColumnar: true}, false, ReasonDisabledColumnar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := planQuery(t, cat, q, BuildOptions{Exec: tc.opts, EnvSwitches: tc.env})
			agg := stageByOp(p, "HashAggregate")
			if agg == nil || agg.Gate == nil {
				t.Fatal("no aggregate gate")
			}
			if agg.Gate.Columnar != tc.columnar || agg.Gate.Reason != tc.reason {
				t.Fatalf("gate %+v, want columnar=%v reason %q", agg.Gate, tc.columnar, tc.reason)
			}
		})
	}
}

// Projection pushdown reads only referenced columns; filter pushdown keeps
// only exact column-op-constant conjuncts.
func TestScanPushdown(t *testing.T) {
	cat := testCatalog(t)
	for _, tc := range []struct {
		q       string
		cols    string
		filters string
	}{
		{"SELECT price FROM b WHERE price > 1000 AND channel = 'Google'", "price, channel", "price > 1000; channel = 'Google'"},
		{"SELECT COUNT(*) FROM b", "auction", ""},
		{"SELECT * FROM b WHERE 5000 <= price", "auction, bidder, price, channel, url, dateTime, extra", "price >= 5000"},
		{"SELECT bidder FROM b WHERE price > 5.5 OR bidder = 3", "bidder, price", ""},
		{"SELECT bidder FROM b WHERE price < 5.5 AND bidder = -3 AND url IS NOT NULL", "bidder, price, url", "bidder = -3; url IS NOT NULL"},
		{"SELECT x.bidder FROM b x JOIN b y ON x.auction = y.auction", "", ""},
	} {
		t.Run(tc.q, func(t *testing.T) {
			p := planQuery(t, cat, tc.q, BuildOptions{})
			scan := stageByOp(p, "Scan")
			if tc.cols == "" {
				return
			}
			if got := strings.Join(scan.Columns, ", "); got != tc.cols {
				t.Errorf("columns read %q, want %q", got, tc.cols)
			}
			if got := strings.Join(scan.Filters, "; "); got != tc.filters {
				t.Errorf("filters %q, want %q", got, tc.filters)
			}
		})
	}
}

// bindText parses, binds and optimises a query.
func bindText(cat *Catalog, q string) (Node, error) { return bindTextWith(cat, q, RuleOptions{}) }

func bindTextWith(cat *Catalog, q string, ro RuleOptions) (Node, error) {
	st, err := sql.Parse(q)
	if err != nil {
		return nil, err
	}
	query, ok := st.(*ast.Query)
	if !ok {
		return nil, fmt.Errorf("not a query: %T", st)
	}
	n, err := Bind(cat, query, BindOptions{Text: q})
	if err != nil {
		return nil, err
	}
	n, _, err = Optimize(n, ro)
	return n, err
}
