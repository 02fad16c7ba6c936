package parquet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// setMorselRows lowers the range size so the small fixtures get cut.
func setMorselRows(t *testing.T, n int64) {
	old := MorselRows
	MorselRows = n
	t.Cleanup(func() { MorselRows = old })
}

// rowsByID sorts rows on their first column (an int64 id).
func rowsByID(rows []exec.Row) []exec.Row {
	sort.Slice(rows, func(i, j int) bool { return rows[i][0].(int64) < rows[j][0].(int64) })
	return rows
}

// runShared runs the parts of a split scan of tbl concurrently, sharing
// one queue, and returns every part's rows and sources.
func runShared(t *testing.T, tbl *Table, parts int, cols []int, dictCols []int) ([][]exec.Row, []*Source) {
	t.Helper()
	share := &connectors.Share{}
	srcs := make([]*Source, parts)
	for i := range srcs {
		s, err := tbl.NewSource(connectors.ScanSpec{Columns: cols, Split: i, Splits: parts, Share: share, BatchSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		if dictCols != nil {
			s.SetDictionaryColumns(dictCols)
		}
		srcs[i] = s
	}
	rows := make([][]exec.Row, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range srcs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := &collector{}
			errs[i] = srcs[i].Run(context.Background(), c)
			rows[i] = c.rows()
			c.release()
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
	}
	return rows, srcs
}

// TestSharedScanRanges: the parts of a split scan share one queue of row
// ranges, with every row group of the dictionary fixture (1000 rows, many
// small pages, nulls, a dictionary that falls back to PLAIN midway) cut
// into several ranges. Together the parts read every row exactly once, as
// plain strings or as dictionary codes, for both data page versions.
func TestSharedScanRanges(t *testing.T) {
	setMorselRows(t, 100)
	for _, version := range []pq.DataPageVersion{pq.DataPageV1, pq.DataPageV2} {
		for _, dictionary := range []bool{true, false} {
			path := filepath.Join(t.TempDir(), "d.parquet")
			writeDictFixture(t, path, dictionary, version)
			for _, parts := range []int{2, 3, 4} {
				for _, codes := range []bool{false, true} {
					name := fmt.Sprintf("v%d/dict=%v/parts=%d/codes=%v", version, dictionary, parts, codes)
					t.Run(name, func(t *testing.T) {
						mem := checkedMem(t)
						defer mem.AssertSize(t, 0)
						tbl := openWith(t, path, mem)
						var want []exec.Row
						for i := 0; i < dictRows; i++ {
							want = append(want, dictRow(i))
						}
						var dictCols []int
						if codes {
							dictCols = []int{1, 2}
						}
						rows, srcs := runShared(t, tbl, parts, nil, dictCols)
						var all []exec.Row
						ranges := int64(0)
						for i := range rows {
							all = append(all, rows[i]...)
							ranges += srcs[i].ranges.Load()
						}
						sameRows(t, "all parts", rowsByID(all), want)
						// Groups of at least two ranges' rows are cut.
						size := max(MorselRows, dictRows/int64(parts*morselsPerPart))
						wantCut := 0
						for lo := 0; lo < dictRows; lo += dictGroupLen {
							if int64(min(dictGroupLen, dictRows-lo)) >= 2*size {
								wantCut++
							}
						}
						q := srcs[0].queue(srcs[0].share)
						if q.cut != wantCut || int64(len(q.ms)) != ranges || ranges <= 4 {
							t.Fatalf("%d row groups cut, %d ranges in the queue, %d read: want %d cut and every range read", q.cut, len(q.ms), ranges, wantCut)
						}
						total, _ := srcs[0].RowGroups()
						for _, s := range srcs[1:] {
							if n, _ := s.RowGroups(); n != 0 {
								t.Fatalf("part other than the first counts %d row groups", n)
							}
						}
						if total != 4 {
							t.Fatalf("first part counts %d row groups, want 4", total)
						}
					})
				}
			}
		}
	}
}

// TestRangesInAnyOrder reads a cut row group's ranges in an order that
// seeks backwards and skips, through one reader that keeps the chunk open
// between ranges (as a part taking every other range does).
func TestRangesInAnyOrder(t *testing.T) {
	setMorselRows(t, 100)
	path := filepath.Join(t.TempDir(), "d.parquet")
	writeDictFixture(t, path, true, pq.DataPageV1)
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl := openWith(t, path, mem)
	src, err := tbl.NewSource(connectors.ScanSpec{Split: 0, Splits: 4, Share: &connectors.Share{}, BatchSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	src.SetDictionaryColumns([]int{1})
	q := src.queue(src.share)
	if q.err != nil {
		t.Fatal(q.err)
	}
	var ms []morsel
	for _, m := range q.ms {
		if m.group == 0 {
			ms = append(ms, m)
		}
	}
	if len(ms) < 3 {
		t.Fatalf("row group 0 cut into %d ranges, want 3 or more", len(ms))
	}
	order := []int{len(ms) - 1, 0, len(ms) - 2}
	for i := 1; i < len(ms)-2; i++ {
		order = append(order, i)
	}
	osf, pf, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer osf.Close()
	rs := testRunState(src, mem, osf, pf)
	defer closeReaders(rs.readers)
	for _, k := range order {
		m := ms[k]
		c := &collector{}
		if _, err := src.readFileRange(context.Background(), rs, src.plan[m.file].fi, m, c); err != nil {
			t.Fatalf("range %d [%d, %d): %v", k, m.lo, m.hi, err)
		}
		var want []exec.Row
		for i := m.lo; i < m.hi; i++ {
			want = append(want, dictRow(int(i)))
		}
		sameRows(t, fmt.Sprintf("range %d", k), c.rows(), want)
		c.release()
	}
}

// TestSeekWithoutOffsetIndex: the page locations the queue reads from page
// headers reach parquet-go as the chunk's offset index, so a range that
// starts late in a row group never reads the pages before it. The test
// corrupts the header of the first data page of a column: reading the
// whole group fails, a range that starts past that page still reads. (This
// guards installOffsetIndex against a parquet-go that stops reading the
// offset index from where the parsed footer says.)
func TestSeekWithoutOffsetIndex(t *testing.T) {
	setMorselRows(t, 100)
	path := filepath.Join(t.TempDir(), "d.parquet")
	writeDictFixture(t, path, false, pq.DataPageV1)
	tbl, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi := tbl.files[0]
	md := &fi.meta.RowGroups[0].Columns[fi.cols[0].leaf].MetaData
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	locs, ok := chunkPages(f, md, fi.meta.RowGroups[0].NumRows)
	f.Close()
	if !ok || len(locs) < 3 {
		t.Fatalf("page locations of column id: ok=%v, %d pages", ok, len(locs))
	}
	// Overwrite the start of the first data page's header with garbage.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := locs[0].Offset; i < locs[0].Offset+4; i++ {
		raw[i] = 0xff
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	mem := checkedMem(t)
	defer mem.AssertSize(t, 0)
	tbl = openWith(t, path, mem)

	// Reading the group from its start meets the corrupt page.
	c, err := func() (*collector, error) {
		src, err := tbl.NewSource(connectors.ScanSpec{Columns: []int{0}})
		if err != nil {
			return nil, err
		}
		c := &collector{}
		return c, src.Run(context.Background(), c)
	}()
	c.release()
	if err == nil {
		t.Fatal("the corrupt page read without an error: the test does not corrupt what it means to")
	}

	// A range from the third page on seeks past it.
	src, err := tbl.NewSource(connectors.ScanSpec{Columns: []int{0}, Split: 0, Splits: 2, Share: &connectors.Share{}})
	if err != nil {
		t.Fatal(err)
	}
	m := morsel{group: 0, lo: locs[2].FirstRowIndex + 1, hi: fi.meta.RowGroups[0].NumRows, locs: [][]format.PageLocation{locs}}
	osf, pf, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer osf.Close()
	rs := testRunState(src, mem, osf, pf)
	defer closeReaders(rs.readers)
	c = &collector{}
	defer c.release()
	if _, err := src.readFileRange(context.Background(), rs, fi, m, c); err != nil {
		t.Fatalf("range past the corrupt page: %v", err)
	}
	rows := c.rows()
	if int64(len(rows)) != m.hi-m.lo || rows[0][0].(int64) != m.lo {
		t.Fatalf("range [%d, %d) read %d rows starting at %v", m.lo, m.hi, len(rows), rows[0])
	}
	// And without the installed locations the same seek decodes the
	// skipped pages (parquet-go's fallback), so it fails.
	osf2, pf2, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer osf2.Close()
	m.locs = nil
	rs2 := testRunState(src, mem, osf2, pf2)
	defer closeReaders(rs2.readers)
	c2 := &collector{}
	defer c2.release()
	if _, err := src.readFileRange(context.Background(), rs2, fi, m, c2); err == nil || !strings.Contains(err.Error(), "id") {
		t.Fatalf("seek without page locations: err = %v, want the corrupt page's error", err)
	}
}

// TestMorselQueueTake: each part takes its own contiguous run in order;
// a part whose run is done takes the last range of the longest run left;
// every range is handed out once.
func TestMorselQueueTake(t *testing.T) {
	q := &morselQueue{}
	for i := int64(0); i < 7; i++ {
		q.ms = append(q.ms, morsel{group: int(i / 4), lo: i * 10, hi: i*10 + 10})
	}
	q.split(2)
	if q.runs[0] != [2]int{0, 4} || q.runs[1] != [2]int{4, 7} {
		t.Fatalf("runs %v, want [0 4] [4 7]", q.runs)
	}
	var got []string
	always := func(morsel) bool { return true }
	take := func(part int) bool {
		m, ok := q.take(part, always)
		if ok {
			got = append(got, fmt.Sprintf("%d:%d", part, m.lo/10))
		}
		return ok
	}
	take(0)
	for take(1) {
	}
	for take(0) {
	}
	want := "0:0 1:4 1:5 1:6 1:3 1:2 1:1"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("takes %s, want %s", s, want)
	}
	// Uneven rows: runs balance rows, not range counts.
	q = &morselQueue{ms: []morsel{{hi: 100}, {hi: 10}, {hi: 10}, {hi: 10}, {hi: 10}, {hi: 10}}}
	q.split(2)
	if q.runs[0] != [2]int{0, 1} {
		t.Fatalf("runs %v, want the 100-row range alone first", q.runs)
	}
	q = &morselQueue{ms: []morsel{{hi: 10}}}
	q.split(3)
	n := 0
	for p := 0; p < 3; p++ {
		for {
			if _, ok := q.take(p, always); !ok {
				break
			}
			n++
		}
	}
	if n != 1 {
		t.Fatalf("one range handed out %d times", n)
	}
	// A range of a row group the part does not have open is taken only
	// from a run with stealFar ranges or more left.
	q = &morselQueue{}
	for i := int64(0); i < 8; i++ {
		q.ms = append(q.ms, morsel{group: int(i / 4), lo: i * 10, hi: i*10 + 10})
	}
	q.split(2)
	notOpen := func(m morsel) bool { return false }
	for {
		if _, ok := q.take(1, notOpen); !ok {
			break
		}
	}
	if left := q.runs[0][1] - q.runs[0][0]; left != stealFar-1 {
		t.Fatalf("part 1 left %d ranges of part 0's run, want %d", left, stealFar-1)
	}
	if _, ok := q.take(1, func(m morsel) bool { return m.group == 0 }); !ok {
		t.Fatal("a range of an open row group was not taken")
	}
}
