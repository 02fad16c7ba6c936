package jsonfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// partCollector takes the ids of one part's batches, columnar or row.
type partCollector struct {
	ids      []int64
	batches  int
	columnar int // batches that came columnar
	wm       bool
	stopAt   int // > 0: return exec.ErrStop from that batch on
	emitsAft int // batches emitted after the first ErrStop
}

func (c *partCollector) Emit(_ context.Context, b *exec.Batch) error {
	if c.stopAt > 0 && c.batches >= c.stopAt {
		c.emitsAft++
		return exec.ErrStop
	}
	c.batches++
	if b.IsColumnar() {
		c.columnar++
		c.ids = append(c.ids, b.Record().Column(0).(*array.Int64).Int64Values()...)
	} else {
		for _, r := range b.Rows() {
			c.ids = append(c.ids, r[0].(int64))
		}
	}
	if c.stopAt > 0 && c.batches >= c.stopAt {
		return exec.ErrStop
	}
	return nil
}

func (c *partCollector) EmitWatermark(_ context.Context, wm int64) error {
	c.wm = wm == exec.MaxWatermark
	return nil
}

// setPieceBytes lowers the piece size for one test.
func setPieceBytes(t *testing.T, n int64) {
	old := pieceBytes
	pieceBytes = n
	t.Cleanup(func() { pieceBytes = old })
}

// writeShareFiles writes the table the shared-queue tests read, and
// returns its directory, every id in it, and each file's line starts.
//
//	a.json: lines of very different lengths, some far longer than a
//	        piece, blank lines, the last line without a newline
//	b.json: empty
//	c.json: lines of exactly 64 bytes, so pieces of a multiple of 64 end
//	        exactly where a line starts
//	d.json: one line only, longer than several pieces
func writeShareFiles(t *testing.T) (dir string, want []int64, starts map[string][]int64) {
	dir = t.TempDir()
	starts = map[string][]int64{}
	id := int64(0)
	write := func(name string, lines []string, lastNewline bool) {
		var sb strings.Builder
		path := filepath.Join(dir, name)
		for i, l := range lines {
			starts[path] = append(starts[path], int64(sb.Len()))
			sb.WriteString(l)
			if i < len(lines)-1 || lastNewline {
				sb.WriteString("\n")
			}
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(pad int) string {
		s := fmt.Sprintf(`{"id":%d,"pad":"%s"}`, id, strings.Repeat("x", pad))
		want = append(want, id)
		id++
		return s
	}
	var a []string
	for i := 0; i < 400; i++ {
		pad := (i * 37) % 150
		if i%97 == 13 {
			pad = 1500 // longer than every piece size the tests use
		}
		a = append(a, rec(pad))
		if i%50 == 0 {
			a = append(a, "") // a blank line
		}
	}
	write("a.json", a, false)
	write("b.json", nil, false)
	var c []string
	for i := 0; i < 200; i++ {
		l := rec(0)
		c = append(c, l+strings.Repeat(" ", 63-len(l))) // 64 bytes with the newline
	}
	write("c.json", c, true)
	write("d.json", []string{rec(3000)}, true)
	return dir, want, starts
}

// runShared opens parts sources of one shared scan and runs them at the
// same time.
func runShared(t *testing.T, tbl *Table, parts int, colls []*partCollector) ([]*Source, []error) {
	return runSharedProgress(t, tbl, parts, colls, nil)
}

func runSharedProgress(t *testing.T, tbl *Table, parts int, colls []*partCollector, progress *exec.Progress) ([]*Source, []error) {
	share := &connectors.Share{}
	srcs := make([]*Source, parts)
	for i := range srcs {
		src, err := tbl.OpenSource(connectors.ScanSpec{Columns: []int{0}, BatchSize: 7, Split: i, Splits: parts, Share: share, Progress: progress})
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = src
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = srcs[i].Run(context.Background(), colls[i])
		}()
	}
	wg.Wait()
	return srcs, errs
}

func newColls(n int) []*partCollector {
	c := make([]*partCollector, n)
	for i := range c {
		c[i] = &partCollector{}
	}
	return c
}

// With a shared queue, parts running at once read every line exactly once
// whatever the piece size: lines longer than a piece, pieces ending
// exactly at a line start, a piece inside one line, an empty file, a last
// line without a newline; for the columnar and the row decode.
func TestSharedPiecesReadEveryLineOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir, want, starts := writeShareFiles(t)
	var atStart, inLine, inside int // boundary cases the piece sizes below cover
	for _, columnar := range []string{"true", "false"} {
		tbl, err := NewTable(map[string]string{"path": dir, "format": "json", "json.columnar-decode": columnar}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tbl = tbl.WithAllocator(mem)
		for _, ps := range []int64{64, 200, 256, 333, 640, 1000, 1 << 20} {
			setPieceBytes(t, ps)
			for _, parts := range []int{2, 3, 4} {
				colls := newColls(parts)
				progress := &exec.Progress{}
				srcs, errs := runSharedProgress(t, tbl, parts, colls, progress)
				var got []int64
				pieces, batches, columnarBatches := 0, 0, 0
				for i, c := range colls {
					if errs[i] != nil {
						t.Fatalf("columnar=%s piece %d, part %d of %d: %v", columnar, ps, i, parts, errs[i])
					}
					if !c.wm {
						t.Fatalf("part %d ended without the final watermark", i)
					}
					got = append(got, c.ids...)
					pieces += srcs[i].pieces
					batches += c.batches
					columnarBatches += c.columnar
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("columnar=%s, piece %d bytes, %d parts: read %d lines, want %d, each once", columnar, ps, parts, len(got), len(want))
				}
				if (columnar == "true") != (columnarBatches == batches) || (columnar == "false") != (columnarBatches == 0) {
					t.Fatalf("columnar=%s: %d of %d batches columnar", columnar, columnarBatches, batches)
				}
				if r, tot := progress.BytesRead.Load(), progress.BytesTotal.Load(); r != tbl.bytes || tot != tbl.bytes {
					t.Fatalf("progress: %d of %d bytes read, want the table's %d of %d", r, tot, tbl.bytes, tbl.bytes)
				}
				q := srcs[0].queue
				if pieces != len(q.pieces) {
					t.Fatalf("parts took %d pieces of %d", pieces, len(q.pieces))
				}
				if columnar == "true" {
					for _, p := range q.pieces {
						switch {
						case slices.Contains(starts[p.path], p.to):
							atStart++
						case !slices.ContainsFunc(starts[p.path], func(s int64) bool { return s >= p.from && s < p.to }):
							inside++
						default:
							inLine++
						}
					}
				}
			}
		}
	}
	if atStart == 0 || inLine == 0 || inside == 0 {
		t.Fatalf("the piece sizes miss a case: %d pieces end at a line start, %d inside a line, %d lie inside one line", atStart, inLine, inside)
	}
}

// A part that finds the queue empty, because the others took every piece
// before it ran, reads nothing and ends cleanly with the final watermark;
// so do parts of a table with no bytes at all.
func TestSharedPartWithoutPieces(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir, want, _ := writeShareFiles(t)
	setPieceBytes(t, 300)
	tbl, err := NewTable(map[string]string{"path": dir, "format": "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	share := &connectors.Share{}
	var srcs []*Source
	for i := 0; i < 3; i++ {
		src, err := tbl.OpenSource(connectors.ScanSpec{Columns: []int{0}, Split: i, Splits: 3, Share: share})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	first := &partCollector{}
	if err := srcs[0].Run(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	if srcs[0].pieces != len(srcs[0].queue.pieces) || srcs[0].pieces < 10 {
		t.Fatalf("the first part took %d of %d pieces, want all of them (and several)", srcs[0].pieces, len(srcs[0].queue.pieces))
	}
	got := slices.Sorted(slices.Values(first.ids))
	if !slices.Equal(got, want) {
		t.Fatalf("one part alone read %d lines, want %d", len(got), len(want))
	}
	for _, src := range srcs[1:] {
		c := &partCollector{}
		if err := src.Run(context.Background(), c); err != nil {
			t.Fatalf("a part left without pieces: %v", err)
		}
		if src.pieces != 0 || len(c.ids) != 0 || !c.wm {
			t.Fatalf("a part left without pieces took %d, read %d rows, final watermark %v", src.pieces, len(c.ids), c.wm)
		}
	}

	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	etbl, err := NewTable(map[string]string{"path": empty, "format": "json"}, schemaOf(t, tbl))
	if err != nil {
		t.Fatal(err)
	}
	colls := newColls(2)
	srcs, errs := runShared(t, etbl.WithAllocator(mem), 2, colls)
	for i := range srcs {
		if errs[i] != nil || srcs[i].pieces != 0 || len(colls[i].ids) != 0 || !colls[i].wm {
			t.Fatalf("empty table, part %d: %v, %d pieces, %d rows, final watermark %v", i, errs[i], srcs[i].pieces, len(colls[i].ids), colls[i].wm)
		}
	}
}

func schemaOf(_ *testing.T, tbl *Table) *arrow.Schema { return tbl.Schema() }

// A part told to stop (LIMIT reached downstream) takes no more pieces: the
// pieces it left are there for the others.
func TestSharedStopTakesNoMorePieces(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir, want, _ := writeShareFiles(t)
	setPieceBytes(t, 300)
	tbl, err := NewTable(map[string]string{"path": dir, "format": "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	share := &connectors.Share{}
	var srcs []*Source
	for i := 0; i < 2; i++ {
		src, err := tbl.OpenSource(connectors.ScanSpec{Columns: []int{0}, BatchSize: 1000, Split: i, Splits: 2, Share: share})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	stopped := &partCollector{stopAt: 1}
	if err := srcs[0].Run(context.Background(), stopped); err != nil {
		t.Fatalf("a stopped part: %v", err)
	}
	if srcs[0].pieces != 1 || stopped.emitsAft != 0 || stopped.wm {
		t.Fatalf("a part stopped at its first batch took %d pieces, emitted %d batches after the stop, final watermark %v", srcs[0].pieces, stopped.emitsAft, stopped.wm)
	}
	rest := &partCollector{}
	if err := srcs[1].Run(context.Background(), rest); err != nil {
		t.Fatal(err)
	}
	if srcs[1].pieces != len(srcs[1].queue.pieces)-1 {
		t.Fatalf("the other part took %d pieces, want every one but the first of %d", srcs[1].pieces, len(srcs[1].queue.pieces))
	}
	// The stopped part's piece is the only one left unread (the part may
	// stop before its last lines); the other part read every other line.
	p0 := srcs[0].queue.pieces[0]
	first := idsStartingIn(t, p0.path, p0.from, p0.to)
	if len(first) < 2 {
		t.Fatalf("the first piece holds %d lines; the test wants several", len(first))
	}
	var others []int64
	for _, id := range want {
		if !slices.Contains(first, id) {
			others = append(others, id)
		}
	}
	if got := slices.Sorted(slices.Values(rest.ids)); !slices.Equal(got, others) {
		t.Fatalf("the other part read %d lines, want the %d outside the first piece, each once", len(got), len(others))
	}
	for _, id := range stopped.ids {
		if !slices.Contains(first, id) {
			t.Fatalf("the stopped part read id %d from outside its piece", id)
		}
	}
}

// idsStartingIn is the ids of the lines of path that start in [from, to),
// found without the reader: an oracle for the tests.
func idsStartingIn(t *testing.T, path string, from, to int64) []int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	off := int64(0)
	for _, l := range strings.SplitAfter(string(data), "\n") {
		var id int64
		if off >= from && off < to && strings.HasPrefix(l, "{") {
			if _, err := fmt.Sscanf(l, `{"id":%d,`, &id); err != nil {
				t.Fatalf("%s offset %d: %v", path, off, err)
			}
			ids = append(ids, id)
		}
		off += int64(len(l))
	}
	return ids
}

// A malformed line in a later piece is named as a static split names it:
// the file and the line's byte offset; and no part hangs on the error.
func TestSharedMalformedLine(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var sb strings.Builder
	for i := 0; i < 500; i++ {
		if i == 420 {
			sb.WriteString(`{"id": "oops` + "\n")
			continue
		}
		fmt.Fprintf(&sb, `{"id": %d, "pad": "%s"}`+"\n", i, strings.Repeat("y", i%40))
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl, err := NewTable(map[string]string{"path": path, "format": "json"}, schemaOf(t, mustTable(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	tbl = tbl.WithAllocator(mem)
	firstErr := func(errs []error) error {
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	var static []error
	for i := 0; i < 3; i++ {
		src, err := tbl.OpenSource(connectors.ScanSpec{Columns: []int{0}, Split: i, Splits: 3})
		if err != nil {
			t.Fatal(err)
		}
		static = append(static, src.Run(context.Background(), &partCollector{}))
	}
	want := firstErr(static)
	if want == nil || !strings.Contains(want.Error(), "bad.json' byte offset ") {
		t.Fatalf("the static split read gave %v", want)
	}
	setPieceBytes(t, 500)
	for _, parts := range []int{2, 3, 4} {
		srcs, errs := runShared(t, tbl, parts, newColls(parts))
		got := firstErr(errs)
		if got == nil || got.Error() != want.Error() {
			t.Fatalf("%d parts: error %v, want %v", parts, got, want)
		}
		if p := srcs[0].queue.pieces; len(p) < 10 {
			t.Fatalf("%d pieces: the bad line should sit in a later one", len(p))
		}
	}
}

func mustTable(t *testing.T, path string) *Table {
	tbl, err := NewTable(map[string]string{"path": path, "format": "json"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// CLINK_JSON_PIECE_BYTES sets the piece size when a scan starts; a value
// that is not a positive byte count is an error every part reports.
func TestPieceBytesEnv(t *testing.T) {
	dir, _, _ := writeShareFiles(t)
	tbl := mustTable(t, filepath.Join(dir, "c.json")) // 200 lines of 64 bytes
	t.Setenv(pieceBytesEnv, "640")
	if q := newPieceQueue(tbl.files, 2); q.err != nil || len(q.pieces) != 20 {
		t.Fatalf("640-byte pieces of 12800 bytes: %d pieces, %v", len(q.pieces), q.err)
	}
	for _, bad := range []string{"0", "-5", "16MB"} {
		t.Setenv(pieceBytesEnv, bad)
		share := &connectors.Share{}
		for i := 0; i < 2; i++ {
			src, err := tbl.OpenSource(connectors.ScanSpec{Split: i, Splits: 2, Share: share})
			if err != nil {
				t.Fatal(err)
			}
			err = src.Run(context.Background(), &partCollector{})
			if err == nil || !strings.Contains(err.Error(), pieceBytesEnv+" = '"+bad+"'") {
				t.Fatalf("%s = %q: %v", pieceBytesEnv, bad, err)
			}
		}
	}
}

// The piece size: the most for a big table, finer when a part would get
// fewer than four pieces, never below 1 MB unless asked for.
func TestPieceSize(t *testing.T) {
	for _, c := range []struct {
		total      int64
		parts      int
		most, want int64
	}{
		{514 << 20, 2, 16 << 20, 16 << 20},
		{514 << 20, 2, 4 << 20, 4 << 20},
		{8 << 20, 2, 4 << 20, 1 << 20},
		{64 << 20, 4, 16 << 20, 4 << 20},
		{6 << 20, 4, 16 << 20, 1 << 20},
		{1000, 2, 16 << 20, 1 << 20},
		{100 << 20, 2, 300, 300},
		{0, 2, 16 << 20, 1 << 20},
	} {
		if got := pieceSize(c.total, c.parts, c.most); got != c.want {
			t.Errorf("pieceSize(%d, %d, %d) = %d, want %d", c.total, c.parts, c.most, got, c.want)
		}
	}
}
