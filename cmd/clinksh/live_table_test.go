package main

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

var liveAt = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// frameOf is a frame over fixed cells.
func frameOf(rows [][]string, changes int64, final bool) liveFrame {
	return frameAll(rows, changes, final, final)
}

func frameAll(rows [][]string, changes int64, final, all bool) liveFrame {
	return liveFrame{
		names: []string{"channel", "n"},
		right: []bool{false, true},
		rows:  len(rows),
		cells: func(n int) ([][]string, error) {
			if n > len(rows) {
				return nil, fmt.Errorf("asked for %d of %d rows", n, len(rows))
			}
			return rows[:n], nil
		},
		changes: changes,
		at:      liveAt,
		final:   final,
		all:     all,
	}
}

var moveUp = regexp.MustCompile(`\x1b\[\d+A\r`)

// lastFrame is the text of the last frame in out, without the escapes.
func lastFrame(out string) string {
	if m := moveUp.FindAllStringIndex(out, -1); m != nil {
		out = out[m[len(m)-1][1]:]
	}
	return strings.TrimSuffix(strings.ReplaceAll(out, "\x1b[K", ""), "\x1b[J")
}

func newLive(width, height int) (*liveTable, *bytes.Buffer) {
	var b bytes.Buffer
	return &liveTable{w: bufio.NewWriter(&b), size: func() (int, int) { return width, height }}, &b
}

func TestLiveTableFirstFrameAndRedraw(t *testing.T) {
	l, out := newLive(80, 24)
	if err := l.draw(frameOf([][]string{{"Google", "5"}}, 1, false)); err != nil {
		t.Fatal(err)
	}
	first := "+---------+---+\n" +
		"| channel | n |\n" +
		"+---------+---+\n" +
		"| Google  | 5 |\n" +
		"+---------+---+\n" +
		"(1 row, 1 change, refreshed 07:08:09; Ctrl-C to stop)\n"
	if out.String() != first {
		t.Fatalf("first frame:\n%q\nwant\n%q", out.String(), first)
	}
	out.Reset()
	if err := l.draw(frameOf([][]string{{"Google", "12"}, {"Apple", "3"}}, 4, false)); err != nil {
		t.Fatal(err)
	}
	// Up over the 6 lines of the first frame, clear, then the new frame
	// (wider n column, one more row).
	// Up over the 6 lines of the first frame to its first column, each new
	// line over an old one (the rest of it cleared), then clear below.
	second := "\x1b[6A\r" +
		"+---------+----+\x1b[K\n" +
		"| channel |  n |\x1b[K\n" +
		"+---------+----+\x1b[K\n" +
		"| Google  | 12 |\x1b[K\n" +
		"| Apple   |  3 |\x1b[K\n" +
		"+---------+----+\x1b[K\n" +
		"(2 rows, 4 changes, refreshed 07:08:09; Ctrl-C to stop)\x1b[K\n" +
		"\x1b[J"
	if out.String() != second {
		t.Fatalf("redraw:\n%q\nwant\n%q", out.String(), second)
	}
	out.Reset()
	if err := l.draw(frameOf(nil, 5, false)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "\x1b[7A\r+") {
		t.Fatalf("the third frame must move up the second's 7 lines: %q", out.String())
	}
}

// A live frame fits the screen: rows are capped to the height less the
// chrome, and lines are cut at the width. The final frame shows all.
func TestLiveTableRowCapAndWidth(t *testing.T) {
	var rows [][]string
	for i := range 7 {
		rows = append(rows, []string{fmt.Sprintf("channel-%d-with-a-long-name", i), fmt.Sprint(i)})
	}
	l, out := newLive(20, 10) // 10 - 6 lines of chrome: 4 rows
	if err := l.draw(frameOf(rows, 1234, false)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 9 { // 3 header lines, 4 rows, border, footer
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	if lines[3] != "| channel-0-with-a-l" || lines[6] != "| channel-3-with-a-l" {
		t.Errorf("rows not cut at width 20 or not the first four:\n%s", out)
	}
	for _, line := range lines {
		if len(line) > 20 {
			t.Errorf("line wider than the terminal: %q", line)
		}
	}
	if lines[8] != "(showing 4 of 7 rows" {
		t.Errorf("footer %q", lines[8])
	}

	l, out = newLive(200, 10)
	if err := l.draw(frameOf(rows, 1234, false)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "(showing 4 of 7 rows, 1,234 changes, refreshed 07:08:09; Ctrl-C to stop)\n") {
		t.Errorf("footer:\n%s", out)
	}
	out.Reset()
	if err := l.draw(frameOf(rows, 1235, true)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "\x1b[9A\r") || !strings.HasSuffix(lastFrame(got), "| channel-6-with-a-long-name | 6 |\n+----------------------------+---+\n(7 rows, 1,235 changes)\n") {
		t.Errorf("final frame must replace the live one and show every row:\n%q", got)
	}
	// A cancelled query's last frame keeps the cap.
	out.Reset()
	if err := l.draw(frameAll(rows, 1236, true, false)); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "\x1b[12A\r") || !strings.HasSuffix(lastFrame(got), "| channel-3-with-a-long-name | 3 |\n+----------------------------+---+\n(showing 4 of 7 rows, 1,236 changes)\n") {
		t.Errorf("cancelled final frame:\n%q", got)
	}
}

// The sink in live mode: the changelog is applied, an updated row keeps
// its place, the progress line is halted before the first frame, and the
// final frame (with no "Ctrl-C") is what stays.
func TestTableModeLive(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	halted := 0
	tm := &tableModeSink{
		inner:      newSink(formatTable, sinkOptions{out: w, mem: mem}),
		live:       &liveTable{w: w, size: func() (int, int) { return 80, 24 }},
		beforeLive: func() { halted++ },
		mem:        mem,
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "op", Type: arrow.BinaryTypes.String},
		{Name: "channel", Type: arrow.BinaryTypes.String},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	if err := tm.Columns(schema, false); err != nil {
		t.Fatal(err)
	}
	if halted != 1 {
		t.Fatalf("progress line halted %d times before the first frame", halted)
	}
	batch := exec.NewRowBatch(schema, []exec.Row{
		{"+I", "Google", int64(1)},
		{"+I", "Apple", int64(1)},
		{"-U", "Google", int64(1)},
		{"+U", "Google", int64(2)},
		{"+I", "Baidu", int64(1)},
		{"-D", "Baidu", int64(1)},
	})
	err := tm.Batch(batch)
	batch.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := tm.finish(nil); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	final := lastFrame(got)
	want := "+---------+---+\n" +
		"| channel | n |\n" +
		"+---------+---+\n" +
		"| Google  | 2 |\n" +
		"| Apple   | 1 |\n" +
		"+---------+---+\n" +
		"(2 rows, 6 changes)\n"
	if final != want {
		t.Fatalf("final frame:\n%s\nwant\n%s\nall output: %q", final, want, got)
	}
}
