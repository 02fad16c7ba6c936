package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// capRun sends rows 0..n-1 of one BIGINT column through a sink of format
// in batches of batch rows, alternating columnar and row batches.
func capRun(t *testing.T, format string, opts sinkOptions, n, batch int) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var out bytes.Buffer
	opts.out, opts.mem = bufio.NewWriter(&out), mem
	s := newSink(format, opts)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if err := s.Columns(schema, true); err != nil {
		t.Fatal(err)
	}
	for start, k := 0, 0; start < n; start, k = start+batch, k+1 {
		var rows []exec.Row
		for i := start; i < min(n, start+batch); i++ {
			rows = append(rows, exec.Row{int64(i)})
		}
		var b *exec.Batch
		if k%2 == 0 {
			rec, err := exec.EncodeRows(mem, schema, rows)
			if err != nil {
				t.Fatal(err)
			}
			b = exec.NewColumnarBatch(rec)
		} else {
			b = exec.NewRowBatch(schema, rows)
		}
		err := s.Batch(b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.finish(nil); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestTableRowCap: a capped table shows the first ceil(cap/2) and the last
// floor(cap/2) rows, a "..." row between them and the count of the others
// in the footer, whatever the batching; an uncapped or short one shows all.
func TestTableRowCap(t *testing.T) {
	for _, maxRows := range []int{0, 1, 4, 5, 40} {
		for _, n := range []int{0, 1, 4, 5, 6, 41, 1000} {
			for _, batch := range []int{1, 3, 256} {
				name := fmt.Sprintf("cap%d/n%d/batch%d", maxRows, n, batch)
				got := capRun(t, formatTable, sinkOptions{maxRows: maxRows}, n, batch)
				var want []string
				capped := maxRows > 0 && n > maxRows
				for i := 0; i < n; i++ {
					head, tail := (maxRows+1)/2, maxRows/2
					if !capped || i < head || i >= n-tail {
						want = append(want, strconv.Itoa(i))
					}
					if capped && i == head {
						want = append(want, "...")
					}
				}
				var shown []string
				lines := strings.Split(got, "\n")
				for _, l := range lines[3:] { // past the header
					if strings.HasPrefix(l, "| ") {
						shown = append(shown, strings.Trim(l, "| "))
					}
				}
				if strings.Join(shown, ",") != strings.Join(want, ",") {
					t.Errorf("%s: rows %v, want %v\n%s", name, shown, want, got)
				}
				footer := fmt.Sprintf("%d rows, finished", n)
				if n == 1 {
					footer = "1 row, finished"
				}
				if capped {
					footer += fmt.Sprintf("; ... %d more rows not shown", n-maxRows)
				} else {
					footer += "\n"
				}
				if !strings.Contains(got, "\n"+footer) {
					t.Errorf("%s: footer is not %q:\n%s", name, footer, got)
				}
			}
		}
	}
}

// TestMachineFormatsAreNotCapped: csv, tsv, json and ndjson print every
// row whatever maxrows says.
func TestMachineFormatsAreNotCapped(t *testing.T) {
	for _, f := range []string{formatCSV, formatTSV, formatJSON, formatNDJSON} {
		got := capRun(t, f, sinkOptions{maxRows: 2}, 100, 7)
		for _, v := range []string{"0", "50", "99"} {
			if !strings.Contains(got, v) {
				t.Errorf("%s: row %s missing from\n%s", f, v, got)
			}
		}
		if strings.Contains(got, "more rows") {
			t.Errorf("%s: capped:\n%s", f, got)
		}
	}
}

// TestTableRowCapKeepsFewRows: the sink holds the cap's rows, not the
// result's, however long it is.
func TestTableRowCapKeepsFewRows(t *testing.T) {
	k := keptRows{max: 6}
	var n int64
	for batch := 0; batch < 1000; batch++ {
		end := n + 100
		for ; n < end; n++ {
			if k.needed(n, end) {
				k.add(n, []string{strconv.FormatInt(n, 10)})
			}
		}
	}
	head, tail := k.rows()
	if len(head) != 3 || len(tail) != 3 || head[0][0] != "0" || tail[0][0] != "99997" || tail[2][0] != "99999" {
		t.Errorf("head %v tail %v", head, tail)
	}
	if h := k.hidden(n); h != 100000-6 {
		t.Errorf("hidden %d", h)
	}
}

// TestExpandedRows: \x prints one block per record, numbered in the
// result, with the cap's gap between head and tail.
func TestExpandedRows(t *testing.T) {
	got := capRun(t, formatTable, sinkOptions{maxRows: 2, expanded: true}, 5, 2)
	want := "-[ RECORD 1 ]\nx | 0\n... 3 more rows\n-[ RECORD 5 ]\nx | 4\n5 rows, finished; ... 3 more rows not shown (\\set maxrows N, 0 for all)\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestShellSetMaxRowsAndExpanded drives \set maxrows and \x through a
// script.
func TestShellSetMaxRowsAndExpanded(t *testing.T) {
	ts := newTestShell(t, formatTable)
	ts.maxRows = defaultMaxRows
	script := "\\set maxrows 2\nSELECT all;\n\\x\nSELECT all;\n\\x off\n\\set\n\\set maxrows -1\n"
	if err := ts.runScript(context.Background(), script); err == nil {
		t.Error("\\set maxrows -1 was accepted")
	}
	out := ts.stdout.String()
	for _, want := range []string{
		"maxrows = 2\n",
		"4 rows, finished; ... 2 more rows not shown",
		"Expanded display is on.\n",
		"-[ RECORD 1 ]",
		"-[ RECORD 4 ]",
		"... 2 more rows\n",
		"Expanded display is off.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "RECORD 2 ]") {
		t.Errorf("record 2 shown under the cap:\n%s", out)
	}
	if !strings.Contains(ts.stderr.String(), `\set maxrows: want a row count`) {
		t.Errorf("stderr %q", ts.stderr.String())
	}
}

// TestTableUncappedStreams: with maxrows 0 a long bounded table is not held
// to the end: once streamAfter rows arrived they are printed (widths from
// them), and every later batch prints as it arrives; the table has one
// header, every row in order, text wider than the first rows' cut with
// "..." (numbers are never cut: they widen their line), and the usual
// footer.
func TestTableUncappedStreams(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var out bytes.Buffer
	s := newSink(formatTable, sinkOptions{out: bufio.NewWriter(&out), mem: mem})
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	if err := s.Columns(schema, true); err != nil {
		t.Fatal(err)
	}
	const n, batch = 2500, 100
	for start := 0; start < n; start += batch {
		var rows []exec.Row
		for i := start; i < start+batch; i++ {
			v := "abcdef"
			if i == n-1 {
				v = "a value wider than the first rows"
			}
			rows = append(rows, exec.Row{int64(i), v})
		}
		b := exec.NewRowBatch(schema, rows)
		before := out.Len()
		err := s.Batch(b)
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
		if end := start + batch; end >= streamAfter && out.Len() == before {
			t.Fatalf("after %d rows nothing more was printed", end)
		} else if end < streamAfter && out.Len() != 0 {
			t.Fatalf("after %d rows, printed before the widths were known:\n%s", end, out.String())
		}
	}
	if err := s.finish(nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if lines[1] != "|   x | s      |" || strings.Count(out.String(), "| s ") != 1 {
		t.Fatalf("header:\n%s", strings.Join(lines[:4], "\n"))
	}
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("| %3d | abcdef |", i)
		if i == n-1 {
			want = fmt.Sprintf("| %3d | a v... |", i)
		}
		if got := lines[3+i]; got != want {
			t.Fatalf("row %d: %q, want %q", i, got, want)
		}
	}
	if got := lines[len(lines)-1]; got != "2500 rows, finished" {
		t.Errorf("footer %q", got)
	}
}

// quitPager is a pager the user has quit: every write fails.
type quitPager struct{ closed *bool }

func (quitPager) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
func (q quitPager) Close() error            { *q.closed = true; return nil }

// TestStreamedTableStopsWhenPagerQuits: a streamed table goes to the
// pager the shell starts; once the user quits it the sink stops the query
// normally (exec.ErrStop), and finish waits for the pager without error.
func TestStreamedTableStopsWhenPagerQuits(t *testing.T) {
	var out bytes.Buffer
	closed := false
	s := newSink(formatTable, sinkOptions{out: bufio.NewWriter(&out),
		pageStream: func() io.WriteCloser { return quitPager{&closed} }})
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if err := s.Columns(schema, true); err != nil {
		t.Fatal(err)
	}
	var err error
	for start := 0; start < 3000 && err == nil; start += 100 {
		rows := make([]exec.Row, 100)
		for i := range rows {
			rows[i] = exec.Row{int64(start + i)}
		}
		b := exec.NewRowBatch(schema, rows)
		err = s.Batch(b)
		b.Release()
	}
	if !errors.Is(err, exec.ErrStop) {
		t.Fatalf("Batch after the pager quit: %v, want exec.ErrStop", err)
	}
	if err := s.finish(nil); err != nil || !closed {
		t.Fatalf("finish: %v, pager closed %v", err, closed)
	}
	if out.Len() != 0 {
		t.Errorf("the table went to stdout as well:\n%s", out.String())
	}
}
