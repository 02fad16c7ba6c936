package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog/changelogtest"
	"github.com/clink-sql/clink/exec/ops"
)

// The result modes over an updating result: tableau (default) prints every
// change with its kind; table applies them and prints the table at the end.
func TestE2EResultModes(t *testing.T) {
	setup := "CREATE TABLE bf WITH ('connector' = 'nexmark', 'table' = 'bid'); SET 'parallelism' = '1';"
	query := "SELECT channel, COUNT(*) AS n FROM bf WHERE channel IN ('Google', 'Apple') GROUP BY channel LIMIT 8;"

	r := runClinksh(t, "", "--format", "csv", "-c", setup+query)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if lines[0] != "op,channel,n" || len(lines) != 9 {
		t.Fatalf("changelog output:\n%s", r.stdout)
	}
	// Replay the changelog by hand: what table mode must print.
	table := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		switch f[0] {
		case "+I", "+U":
			table[f[1]] = f[2]
		case "-U", "-D":
			delete(table, f[1])
		default:
			t.Fatalf("row kind %q in %q", f[0], l)
		}
	}

	r = runClinksh(t, "", "--format", "csv", "-c", setup+"SET 'sql-client.execution.result-mode' = 'table';"+query)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if got[0] != "channel,n" || len(got)-1 != len(table) {
		t.Fatalf("table mode printed:\n%s\nwant the %d rows %v", r.stdout, len(table), table)
	}
	for _, l := range got[1:] {
		f := strings.Split(l, ",")
		if table[f[0]] != f[1] {
			t.Fatalf("table mode row %q, the changelog says %s = %s", l, f[0], table[f[0]])
		}
	}
}

// A continuous top-n in table mode is shown in rank order (as the Flink SQL
// client shows it), not in the order its rows entered the top: after many
// changes of an unbounded top 5, the table printed is sorted by price,
// highest first, and the engine told the sink that order.
func TestTableModeTopNInRankOrder(t *testing.T) {
	s := engine.NewSession(engine.SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, st := range []string{
		"CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid')",
		"SET 'parallelism' = '1'",
	} {
		if _, err := s.Execute(ctx, st, nil, engine.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	tm := &tableModeSink{inner: newSink(formatCSV, sinkOptions{out: w})}
	counted := &countingSink{sink: tm, after: 60, stop: cancel}
	_, err := s.Execute(ctx, "SELECT auction, price FROM bids ORDER BY price DESC LIMIT 5", counted, engine.ExecOptions{})
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if tm.order == nil {
		t.Fatal("the sink was not told the top-n's order")
	}
	if err := tm.finish(nil); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if lines[0] != "auction,price" || len(lines) != 6 {
		t.Fatalf("want a header and 5 rows after %d changes:\n%s", counted.n, b.String())
	}
	prev := int64(math.MaxInt64)
	for _, l := range lines[1:] {
		p, err := strconv.ParseInt(strings.Split(l, ",")[1], 10, 64)
		if err != nil || p > prev {
			t.Fatalf("not in rank order after %d changes:\n%s", counted.n, b.String())
		}
		prev = p
	}
}

// countingSink passes batches on and cancels the query once after rows
// have gone by.
type countingSink struct {
	sink
	after, n int
	stop     func()
}

func (c *countingSink) Batch(b *exec.Batch) error {
	c.n += b.Len()
	if c.n >= c.after {
		c.stop()
	}
	return c.sink.Batch(b)
}

func (c *countingSink) ResultOrder(keys []ops.SortKey) {
	if ow, ok := c.sink.(engine.OrderedWriter); ok {
		ow.ResultOrder(keys)
	}
}

// A retraction removes the row it names bit for bit: a NaN row is
// retracted (NaN is not equal to itself under ==), and -0.0 does not take
// away 0.0.
func TestTableModeRetractsNaN(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "op", Type: arrow.BinaryTypes.String},
		{Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	got := tableModeCSV(t, schema, []exec.Row{
		{"+I", "nan", math.NaN()},
		{"+I", "zero", 0.0},
		{"-D", "nan", math.NaN()},
		{"-D", "zero", math.Copysign(0, -1)},
	})
	if got != "k,x\nzero,0.0" {
		t.Errorf("table:\n%s\nwant only the 0.0 row", got)
	}
}

// tableModeCSV applies changes (of schema, the row kind first) through the
// table result mode and returns the table it prints as CSV.
func tableModeCSV(t *testing.T, schema *arrow.Schema, changes []exec.Row) string {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	tm := &tableModeSink{inner: newSink(formatCSV, sinkOptions{out: w})}
	if err := tm.Columns(schema, false); err != nil {
		t.Fatal(err)
	}
	batch := exec.NewRowBatch(schema, changes)
	err := tm.Batch(batch)
	batch.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.finish(nil); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return strings.TrimSpace(b.String())
}

// The shell's table mode shows the shared changelog fixture's table, the
// same one the kernel's live table test reads (dispatch's
// TestLiveTableMatchesSharedFixture): one changelog, one table, in order.
func TestTableModeMatchesSharedFixture(t *testing.T) {
	changes, want := changelogtest.ReadFixture(t, "../../testdata/changelog/display.txt")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "op", Type: arrow.BinaryTypes.String},
		{Name: "k", Type: arrow.BinaryTypes.String},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	got := strings.Split(tableModeCSV(t, schema, changes), "\n")
	if got[0] != "k,n" {
		t.Fatalf("header %q", got[0])
	}
	if g, w := strings.Join(got[1:], "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("table:\n%s\nwant:\n%s", g, w)
	}
}
