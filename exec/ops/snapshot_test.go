package ops

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// The checkpoint tests of every Snapshotter in this package share one
// property: an operator A runs over a whole random input (batches of
// either form, NULLs, watermarks between them, then the ends of the
// inputs); an operator B runs over a prefix cut at a random step, is
// snapshotted into a fresh C through state.Memory (Arrow IPC), and C runs
// over the rest. C's output step by step must be A's after the cut, B's
// must be A's before it, and B, run on over the rest after the snapshot,
// must give A's output too (the snapshot changed nothing). A snapshot
// taken twice writes the same bytes.

// snapStep is one call on the operator.
type snapStep struct {
	input    int
	rows     []exec.Row // a batch, unless wm or finish
	columnar bool
	wm       int64
	isWM     bool
	finish   bool
	at       int // the step's index in the whole input: the test clock
}

// snapClock is the wall clock of operators that read one (a join's state
// TTL): one second per step, so a restored operator sees the time the
// uninterrupted one saw at the same step.
var snapClock time.Time

func (s snapStep) String() string {
	switch {
	case s.isWM:
		return fmt.Sprintf("wm %d", s.wm)
	case s.finish:
		return fmt.Sprintf("finish %d", s.input)
	}
	return fmt.Sprintf("batch %d: %d rows (columnar %v)", s.input, len(s.rows), s.columnar)
}

// snapCase is one operator configuration under test.
type snapCase struct {
	name    string
	schemas []*arrow.Schema // per input
	newOp   func(mem memory.Allocator) exec.Operator
	// ordered: the operator promises an order within one step's output
	// (a changelog does); otherwise a step's rows compare as a multiset.
	ordered bool
	// columnarOut turns born-columnar output on (when the operator has it).
	columnarOut bool
	// dictS: two of three columnar batches carry column s (1) as a
	// dictionary-encoded VARCHAR, as a Parquet scan hands them out.
	dictS bool
}

// stepOut is what one step emitted: rows (rendered) and watermarks.
type stepOut struct {
	rows []string
	wms  []int64
}

// stepCapture renders what an operator emits, per step.
type stepCapture struct {
	cur stepOut
}

func (c *stepCapture) Emit(_ context.Context, b *exec.Batch) error {
	var rows []exec.Row
	if b.IsColumnar() {
		rows = exec.DecodeRows(b.Record())
	} else {
		rows = b.Rows()
	}
	for _, r := range rows {
		c.cur.rows = append(c.cur.rows, fmt.Sprint(r))
	}
	return nil
}

func (c *stepCapture) EmitWatermark(_ context.Context, wm int64) error {
	c.cur.wms = append(c.cur.wms, wm)
	return nil
}

// runSteps runs steps on op and returns each step's output.
func runSteps(t *testing.T, mem memory.Allocator, c snapCase, op exec.Operator, steps []snapStep) []stepOut {
	t.Helper()
	ctx := context.Background()
	out := &stepCapture{}
	res := make([]stepOut, 0, len(steps))
	for i, s := range steps {
		snapClock = time.Unix(int64(s.at), 0)
		var err error
		switch {
		case s.isWM:
			err = op.OnWatermark(ctx, s.wm, out)
		case s.finish:
			err = op.Finish(ctx, s.input, out)
		default:
			var b *exec.Batch
			if s.columnar {
				rec, encErr := exec.EncodeRows(mem, c.schemas[s.input], s.rows)
				if encErr != nil {
					t.Fatal(encErr)
				}
				if c.dictS && s.at%3 != 0 && c.schemas[s.input].Field(1).Type.ID() == arrow.STRING {
					rec = dictEncodeS(t, mem, rec)
				}
				b = exec.NewColumnarBatch(rec)
			} else {
				b = exec.NewRowBatch(c.schemas[s.input], s.rows)
			}
			_, err = exec.Dispatch(ctx, op, true, s.input, b, out)
			b.Release()
		}
		if err != nil && err != exec.ErrStop {
			t.Fatalf("step %d (%s): %v", i, s, err)
		}
		if !c.ordered {
			sort.Strings(out.cur.rows)
		}
		res = append(res, out.cur)
		out.cur = stepOut{}
	}
	return res
}

// recordingWriter keeps each part's IPC bytes, to compare two snapshots.
type recordingWriter struct {
	parts map[string][]byte
}

func (w *recordingWriter) Records(name string, schema *arrow.Schema, recs ...arrow.RecordBatch) error {
	var buf bytes.Buffer
	if err := state.WriteIPC(&buf, schema, recs); err != nil {
		return err
	}
	w.parts["records "+name] = buf.Bytes()
	return nil
}

func (w *recordingWriter) Value(name string, v []byte) error {
	w.parts["value "+name] = bytes.Clone(v)
	return nil
}

func snapshotBytes(t *testing.T, s exec.Snapshotter) map[string][]byte {
	t.Helper()
	w := &recordingWriter{parts: map[string][]byte{}}
	if err := s.SnapshotState(context.Background(), w); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return w.parts
}

func newOpFor(c snapCase, mem memory.Allocator) exec.Operator {
	op := c.newOp(mem)
	if s, ok := op.(exec.ColumnarOutputSetter); ok {
		s.SetColumnarOutput(c.columnarOut)
	}
	return op
}

// checkCuts runs the property at each cut.
func checkCuts(t *testing.T, c snapCase, steps []snapStep, cuts []int) {
	t.Helper()
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for i := range steps {
		steps[i].at = i
	}
	a := newOpFor(c, mem)
	want := runSteps(t, mem, c, a, steps)
	a.Close()
	rowsOut := 0
	for _, s := range want {
		rowsOut += len(s.rows)
	}
	if rowsOut == 0 {
		t.Fatalf("%s: the input gives no output at all: the test would prove nothing", c.name)
	}
	for _, cut := range cuts {
		b := newOpFor(c, mem)
		gotB := runSteps(t, mem, c, b, steps[:cut])
		compareSteps(t, c.name+" before the cut", want[:cut], gotB, 0)
		first := snapshotBytes(t, b.(exec.Snapshotter))
		second := snapshotBytes(t, b.(exec.Snapshotter))
		if !maps.EqualFunc(first, second, bytes.Equal) {
			var diff []string
			for _, k := range slices.Sorted(maps.Keys(first)) {
				if !bytes.Equal(first[k], second[k]) {
					diff = append(diff, k)
				}
			}
			t.Errorf("%s cut %d: two snapshots of one state differ in %v", c.name, cut, diff)
		}
		r := newOpFor(c, mem)
		if err := state.RoundTrip(ctx, mem, b.(exec.Snapshotter), r.(exec.Snapshotter)); err != nil {
			t.Fatalf("%s cut %d: %v", c.name, cut, err)
		}
		gotC := runSteps(t, mem, c, r, steps[cut:])
		compareSteps(t, fmt.Sprintf("%s restored at step %d", c.name, cut), want[cut:], gotC, cut)
		gotB = runSteps(t, mem, c, b, steps[cut:])
		compareSteps(t, fmt.Sprintf("%s snapshotted at step %d, run on", c.name, cut), want[cut:], gotB, cut)
		b.Close()
		r.Close()
	}
}

func compareSteps(t *testing.T, what string, want, got []stepOut, offset int) {
	t.Helper()
	for i := range want {
		if !slices.Equal(want[i].rows, got[i].rows) || !slices.Equal(want[i].wms, got[i].wms) {
			t.Fatalf("%s: step %d differs:\nwant rows %v wms %v\ngot  rows %v wms %v",
				what, offset+i, trimList(want[i].rows), want[i].wms, trimList(got[i].rows), got[i].wms)
		}
	}
}

func trimList(s []string) string {
	if len(s) > 12 {
		return strings.Join(s[:12], " ") + fmt.Sprintf(" ... (%d rows)", len(s))
	}
	return strings.Join(s, " ")
}

// ---- random input ----

// snapSchema is the tests' input: every type an aggregate keeps a kind of
// state for. t is TIMESTAMP(3), event time.
var snapSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Millisecond}, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
}, nil)

// snapGen makes random rows of snapSchema with event times that advance
// with jitter (some rows arrive behind the watermark) and NULLs in every
// column.
type snapGen struct {
	rng  *rand.Rand
	now  int64 // ms
	keys int
}

func (g *snapGen) maybeNull(v any) any {
	if g.rng.Intn(10) == 0 {
		return nil
	}
	return v
}

func (g *snapGen) row() exec.Row {
	g.now += int64(g.rng.Intn(300))
	t := g.now - int64(g.rng.Intn(2500))
	var ts any = arrow.Timestamp(t)
	if g.rng.Intn(40) == 0 {
		ts = nil
	}
	return exec.Row{
		g.maybeNull(int64(g.rng.Intn(g.keys))),
		g.maybeNull(string(rune('a' + g.rng.Intn(6)))),
		g.maybeNull(int64(g.rng.Intn(200) - 100)),
		g.maybeNull(float64(g.rng.Intn(1000)) / 8),
		ts,
		g.maybeNull(g.rng.Intn(3) > 0),
		g.maybeNull(decimal128.FromI64(int64(g.rng.Intn(100000) - 50000))),
	}
}

// steps makes n steps over inputs: batches of 0-12 rows, watermarks
// trailing the event time by up to 2 s, then every input's end.
func (g *snapGen) steps(n, inputs int, rows func(input int) exec.Row) []snapStep {
	if rows == nil {
		rows = func(int) exec.Row { return g.row() }
	}
	var steps []snapStep
	for range n {
		if g.rng.Intn(4) == 0 {
			steps = append(steps, snapStep{isWM: true, wm: (g.now - int64(g.rng.Intn(2000))) * 1000})
			continue
		}
		in := g.rng.Intn(inputs)
		b := make([]exec.Row, g.rng.Intn(13))
		for i := range b {
			b[i] = rows(in)
		}
		steps = append(steps, snapStep{input: in, rows: b, columnar: g.rng.Intn(2) == 0})
	}
	for i := range inputs {
		steps = append(steps, snapStep{input: i, finish: true})
	}
	return steps
}

// randomCuts are k cut points in 1..len-1, always including the first and
// the last step.
func randomCuts(rng *rand.Rand, n, k int) []int {
	cuts := []int{1, n - 1}
	for range k {
		cuts = append(cuts, 1+rng.Intn(n-1))
	}
	return cuts
}

// checkSeeds runs the property over several seeds.
func checkSeeds(t *testing.T, c snapCase, inputs int, rows func(g *snapGen, input int) exec.Row) {
	t.Helper()
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewSource(seed))
		g := &snapGen{rng: rng, now: 1_700_000_000_000, keys: 3 + int(seed)*3}
		var rf func(int) exec.Row
		if rows != nil {
			rf = func(in int) exec.Row { return rows(g, in) }
		}
		steps := g.steps(60, inputs, rf)
		checkCuts(t, c, steps, randomCuts(rng, len(steps), 4))
	}
}

// restoreMust fails: the state of from does not fit into.
func restoreMustFail(t *testing.T, mem memory.Allocator, from, into exec.Snapshotter, wantText string) {
	t.Helper()
	err := state.RoundTrip(context.Background(), mem, from, into)
	if err == nil {
		t.Fatalf("a mismatched state was restored without an error")
	}
	if !strings.Contains(err.Error(), wantText) {
		t.Fatalf("error %q does not say %q", err, wantText)
	}
}

func snapRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

func roundTrip(from, into exec.Snapshotter, mem memory.Allocator) error {
	return state.RoundTrip(context.Background(), mem, from, into)
}

// dictEncodeS replaces rec's column 1 (VARCHAR) by a dictionary-encoded
// one over the values a..f and a NULL entry, and releases rec.
func dictEncodeS(t *testing.T, mem memory.Allocator, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	defer rec.Release()
	dict := testDict(mem, []string{"f", "e", "<null>", "d", "c", "b", "a"})
	defer dict.Release()
	codes := array.NewInt32Builder(mem)
	defer codes.Release()
	col := rec.Column(1).(*array.String)
	for i := 0; i < col.Len(); i++ {
		switch {
		case col.IsNull(i) && i%2 == 0:
			codes.AppendNull()
		case col.IsNull(i):
			codes.Append(2)
		default:
			codes.Append(int32(6 - (col.Value(i)[0] - 'a')))
		}
	}
	ca := codes.NewArray()
	defer ca.Release()
	da := array.NewDictionaryArray(dictStrType, ca, dict)
	defer da.Release()
	cols := recordColumns(rec)
	cols[1] = da
	fields := append([]arrow.Field(nil), rec.Schema().Fields()...)
	fields[1].Type = dictStrType
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}
