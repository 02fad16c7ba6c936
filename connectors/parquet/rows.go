package parquet

import (
	"fmt"
	"io"
	"sort"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// A scan reads a row group as a list of row runs: the rows page statistics
// leave (pages.go), cut into batches, and within a batch the rows a
// predicate passes (late.go). Each column reader moves from run to run
// with skipTo, which jumps over the pages between them without reading
// them when it knows where the chunk's pages are.

// rowRun is rows [lo, hi) of a row group.
type rowRun struct{ lo, hi int64 }

func (r rowRun) len() int64 { return r.hi - r.lo }

// runRows is the number of rows in runs.
func runRows(runs []rowRun) int64 {
	var n int64
	for _, r := range runs {
		n += r.len()
	}
	return n
}

// clipRuns is the part of runs inside [lo, hi); nil runs mean every row.
func clipRuns(runs []rowRun, lo, hi int64) []rowRun {
	if runs == nil {
		return []rowRun{{lo, hi}}
	}
	var out []rowRun
	for _, r := range runs {
		r.lo, r.hi = max(r.lo, lo), min(r.hi, hi)
		if r.lo < r.hi {
			out = append(out, r)
		}
	}
	return out
}

// takeRuns splits the first n rows off runs: those rows' runs (appended to
// buf[:0]) and what is left.
func takeRuns(runs []rowRun, n int64, buf []rowRun) (head, rest []rowRun) {
	head = buf[:0]
	for len(runs) > 0 && n > 0 {
		r := runs[0]
		if r.len() > n {
			head = append(head, rowRun{r.lo, r.lo + n})
			runs[0].lo += n
			return head, runs
		}
		head = append(head, r)
		n -= r.len()
		runs = runs[1:]
	}
	return head, runs
}

// chunkSource is where a column reader's chunk is, so that it can find the
// chunk's page locations when it first needs to jump over pages.
type chunkSource struct {
	f    io.ReaderAt
	pf   *parquet.File
	cc   parquet.ColumnChunk
	md   *format.ColumnMetaData
	g    int
	leaf int
	rows int64
}

// pageCounts are a scan's page counters, for EXPLAIN ANALYZE.
type pageCounts struct {
	read   atomic.Int64 // data pages read (decompressed and decoded)
	bytes  atomic.Int64 // their decoded size
	jumped atomic.Int64 // data pages a reader jumped over without reading
}

// locations returns the chunk's data page locations: the file's offset
// index, else the ones found by reading the page headers (installed as the
// chunk's offset index, so that parquet-go can seek). nil when neither can
// be had; the reader then reads on page by page.
func (r *colReader) locations() []format.PageLocation {
	if r.locsTried {
		return r.locs
	}
	r.locsTried = true
	src := r.src
	if src.pf == nil {
		return nil
	}
	ch := &src.pf.Metadata().RowGroups[src.g].Columns[src.leaf]
	if ch.OffsetIndexOffset != 0 {
		fc, ok := src.cc.(*parquet.FileColumnChunk)
		if !ok {
			return nil
		}
		oi, err := fc.OffsetIndex()
		if err != nil || oi.NumPages() == 0 {
			return nil
		}
		locs := make([]format.PageLocation, oi.NumPages())
		for i := range locs {
			locs[i] = format.PageLocation{Offset: oi.Offset(i), CompressedPageSize: int32(oi.CompressedPageSize(i)), FirstRowIndex: oi.FirstRowIndex(i)}
		}
		r.locs = locs
		return locs
	}
	locs, ok := chunkPages(src.f, src.md, src.rows)
	if !ok || installOffsetIndex(src.pf, src.g, src.leaf, src.cc, locs) != nil {
		return nil
	}
	r.locs = locs
	return locs
}

// setLocations gives the reader its chunk's page locations, found by the
// caller (a split scan's queue reads them to cut row groups).
func (r *colReader) setLocations(locs []format.PageLocation) error {
	if r.locsTried || locs == nil {
		return nil
	}
	if err := installOffsetIndex(r.src.pf, r.src.g, r.src.leaf, r.src.cc, locs); err != nil {
		return err
	}
	r.locs, r.locsTried = locs, true
	return nil
}

// advance skips n rows of the current page (n at most what is left of it).
func (r *colReader) advance(n int) {
	if r.defs != nil {
		r.valPos += countLevel(r.defs[r.rowPos:r.rowPos+n], r.b.maxDef)
	} else {
		r.valPos += n
	}
	r.rowPos += n
	r.next += int64(n)
}

// skipTo moves the reader to row t of its chunk. Inside the current page it
// only moves its positions. Past it, with the chunk's page locations, it
// seeks to the page holding t: parquet-go reads neither the pages in
// between nor that page until a row of it is read. Without locations it
// reads on, page by page. Going back needs the locations.
func (r *colReader) skipTo(t int64) error {
	if t > r.next {
		r.advance(int(min(t-r.next, int64(r.pageRows-r.rowPos))))
	}
	if t == r.next {
		return nil
	}
	if l := r.locations(); l != nil {
		k := sort.Search(len(l), func(k int) bool { return l[k].FirstRowIndex > t }) - 1
		if k < 0 {
			return fmt.Errorf("row %d is before the chunk's first page", t)
		}
		if t > r.next && k == r.pageIdx+1 {
			// The page after the current one: parquet-go reads on to it.
			r.dropPage()
			r.skip = int(t - l[k].FirstRowIndex)
			r.next = t
			return nil
		}
		if t > r.next && r.counts != nil {
			r.counts.jumped.Add(int64(k - r.pageIdx - 1))
		}
		return r.seek(t, l[k].FirstRowIndex, k)
	}
	if t < r.next {
		return fmt.Errorf("cannot go back to row %d from row %d without page locations", t, r.next)
	}
	for r.next < t {
		if r.rowPos == r.pageRows {
			if err := r.nextPage(); err != nil {
				return err
			}
			continue
		}
		r.advance(int(min(t-r.next, int64(r.pageRows-r.rowPos))))
	}
	return nil
}

// readRuns reads the rows of runs into o from row pos on.
func (r *colReader) readRuns(o *outCol, pos int, runs []rowRun) error {
	for _, run := range runs {
		if err := r.skipTo(run.lo); err != nil {
			return err
		}
		if err := r.fill(o, pos, int(run.len())); err != nil {
			return err
		}
		pos += int(run.len())
	}
	return nil
}
