package parquet

import (
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
)

// Finer skipping than whole row groups by their statistics (prune.go),
// decided when a row group is about to be read:
//
//   - pages: the skip filters against each page's min/max, from the file's
//     column and offset indexes when it has them, else from the page
//     headers (arrow-go and parquet-go write statistics there). Rows of a
//     page that cannot match are left out of the runs the scan reads, in
//     every column.
//   - dictionaries: a conjunct of the predicate over one VARCHAR column
//     whose chunk is dictionary-encoded throughout is evaluated over the
//     dictionary (and over NULL, when the chunk may hold one): when no
//     entry makes it TRUE, no row can, and the group is skipped. That
//     covers = and IN of values the group lacks, LIKE patterns (a prefix
//     or not) no entry matches, and any other test of the one column.
//
// Any doubt keeps the rows: no statistics, a page count that does not add
// up, a dictionary that cannot be read or a conjunct that fails on it.

// skipReason says why a row group is not read at all.
type skipReason int

const (
	skipNone skipReason = iota
	skipDictionary
	skipPages
)

// groupPlan is what a scan reads of one row group.
type groupPlan struct {
	skip skipReason
	// runs are the rows the page statistics leave (nil: all of them).
	runs []rowRun
	// locs are page locations found on the way, by output column (nil
	// entries where none were read).
	locs [][]format.PageLocation
}

// pageStat is one data page of a column chunk.
type pageStat struct {
	loc   format.PageLocation
	rows  int64
	stats format.Statistics
	// exactNulls: stats.NullCount is known (a V2 header, a column
	// index's null counts); otherwise a zero count is trusted as for a
	// chunk (statsOf).
	exactNulls bool
	// noNulls: nothing is known of the page's nulls (a column index
	// without null counts).
	unknownNulls bool
	nullPage     bool // the column index says every value is null
}

func pageLocs(pages []pageStat) []format.PageLocation {
	locs := make([]format.PageLocation, len(pages))
	for i, p := range pages {
		locs[i] = p.loc
	}
	return locs
}

// pageStats is what p's statistics say, as chunkStats.
func pageStats(b *binding, p *pageStat, typ arrow.DataType) chunkStats {
	if p.nullPage {
		return chunkStats{allNull: p.rows > 0}
	}
	st := statsOf(b, &p.stats, p.rows, typ)
	switch {
	case p.unknownNulls:
		st.noNull, st.allNull = b.maxDef == 0, false
	case p.exactNulls:
		st.noNull = b.maxDef == 0 || p.stats.NullCount == 0
	}
	return st
}

// chunkPageIndex lists a column chunk's data pages with their statistics:
// from the file's column and offset indexes, else from the page headers.
func chunkPageIndex(f io.ReaderAt, ch *format.ColumnChunk, rows int64) ([]pageStat, bool) {
	if ch.ColumnIndexOffset == 0 || ch.OffsetIndexOffset == 0 {
		return chunkPageHeaders(f, &ch.MetaData, rows)
	}
	var ci format.ColumnIndex
	var oi format.OffsetIndex
	if !readThrift(f, ch.ColumnIndexOffset, ch.ColumnIndexLength, &ci) || !readThrift(f, ch.OffsetIndexOffset, ch.OffsetIndexLength, &oi) {
		return chunkPageHeaders(f, &ch.MetaData, rows)
	}
	n := len(oi.PageLocations)
	if n == 0 || len(ci.NullPages) != n || len(ci.MinValues) != n || len(ci.MaxValues) != n {
		return nil, false
	}
	nullCounts := len(ci.NullCounts) == n
	pages := make([]pageStat, n)
	for i, loc := range oi.PageLocations {
		end := rows
		if i+1 < n {
			end = oi.PageLocations[i+1].FirstRowIndex
		}
		p := pageStat{loc: loc, rows: end - loc.FirstRowIndex, nullPage: ci.NullPages[i]}
		if p.rows <= 0 || (i == 0 && loc.FirstRowIndex != 0) {
			return nil, false
		}
		p.stats.MinValue, p.stats.MaxValue = ci.MinValues[i], ci.MaxValues[i]
		if nullCounts {
			p.stats.NullCount, p.exactNulls = ci.NullCounts[i], true
		} else {
			p.unknownNulls = true
		}
		pages[i] = p
	}
	return pages, true
}

// readThrift decodes the thrift struct of length bytes at off into v.
func readThrift(f io.ReaderAt, off int64, length int32, v any) bool {
	if length <= 0 || length > 64<<20 {
		return false
	}
	buf := make([]byte, length)
	if n, err := f.ReadAt(buf, off); n < len(buf) && err != nil {
		return false
	}
	return thrift.Unmarshal(&thrift.CompactProtocol{}, buf, v) == nil
}

// dictConjunct is the predicate's conjuncts over one VARCHAR output
// column, ANDed: what a row group's dictionary of it is tested against.
type dictConjunct struct {
	col  int
	pred expr.Expr
}

// dictConjuncts groups the one-column conjuncts of conj over VARCHAR
// columns of schema by column.
func dictConjuncts(conj []connectors.Conjunct, schema *arrow.Schema) []dictConjunct {
	var out []dictConjunct
	for _, c := range conj {
		if len(c.Columns) != 1 || c.Expr == nil || c.Expr.Type().ID() != arrow.BOOL {
			continue
		}
		col := c.Columns[0]
		if col < 0 || col >= schema.NumFields() || schema.Field(col).Type.ID() != arrow.STRING {
			continue
		}
		found := false
		for i := range out {
			if out[i].col == col {
				if and, err := expr.NewBinary("AND", out[i].pred, c.Expr); err == nil {
					out[i].pred = and
				}
				found = true
			}
		}
		if !found {
			out = append(out, dictConjunct{col: col, pred: c.Expr})
		}
	}
	return out
}

// planGroup decides what the scan reads of row group g of fi (open as f
// and pf): nothing (a dictionary or the page statistics rule every row
// out), some runs of rows, or all of it.
func (s *Source) planGroup(mem memory.Allocator, f io.ReaderAt, pf *parquet.File, fi *fileInfo, g int) (*groupPlan, error) {
	gp := &groupPlan{}
	if s.rowGroupsOnly {
		return gp, nil
	}
	rg := &fi.meta.RowGroups[g]
	n := rg.NumRows
	skip := func(why skipReason) (*groupPlan, error) {
		gp.skip = why
		if s.progress != nil {
			s.progress.RowsRead.Add(n) // done, as far as progress goes
		}
		return gp, nil
	}
	for _, dc := range s.dictConj {
		if s.dictionaryExcludes(mem, pf, fi, g, dc) {
			s.counts.groupsDict.Add(1)
			return skip(skipDictionary)
		}
	}
	if len(s.filters) == 0 {
		return gp, nil
	}
	keep := []rowRun{{0, n}}
	for _, flt := range s.filters {
		if flt.Column < 0 || flt.Column >= len(fi.cols) {
			continue
		}
		b := &fi.cols[flt.Column]
		if b.leaf >= len(rg.Columns) {
			continue
		}
		pages, ok := chunkPageIndex(f, &rg.Columns[b.leaf], n)
		if !ok {
			continue
		}
		typ := s.tableSchema.Field(flt.Column).Type
		for i := range pages {
			p := &pages[i]
			if !mayMatch(pageStats(b, p, typ), flt) {
				keep = cutRun(keep, p.loc.FirstRowIndex, p.loc.FirstRowIndex+p.rows)
			}
		}
		for i, c := range s.cols {
			if c == flt.Column {
				if gp.locs == nil {
					gp.locs = make([][]format.PageLocation, len(s.cols))
				}
				gp.locs[i] = pageLocs(pages)
			}
		}
	}
	if left := runRows(keep); left < n {
		s.counts.rowsPages.Add(n - left)
		if left == 0 {
			s.counts.groupsPages.Add(1)
			return skip(skipPages)
		}
		gp.runs = keep
	}
	return gp, nil
}

// cutRun removes rows [lo, hi) from runs.
func cutRun(runs []rowRun, lo, hi int64) []rowRun {
	var out []rowRun
	for _, r := range runs {
		if r.hi <= lo || r.lo >= hi {
			out = append(out, r)
			continue
		}
		if r.lo < lo {
			out = append(out, rowRun{r.lo, lo})
		}
		if r.hi > hi {
			out = append(out, rowRun{hi, r.hi})
		}
	}
	return out
}

// dictionaryExcludes reports whether no row of row group g can satisfy
// dc: the column's chunk is dictionary-encoded throughout and dc is TRUE
// for none of the dictionary's entries (nor for NULL, when the chunk may
// hold one).
func (s *Source) dictionaryExcludes(mem memory.Allocator, pf *parquet.File, fi *fileInfo, g int, dc dictConjunct) bool {
	b := &fi.cols[s.cols[dc.col]]
	rg := &fi.meta.RowGroups[g]
	if b.conv != convBytes || b.physical != format.ByteArray || b.leaf >= len(rg.Columns) {
		return false
	}
	md := &rg.Columns[b.leaf].MetaData
	if !dictionaryOnly(md) {
		return false
	}
	dict, ok := readDictionary(mem, pf, g, b.leaf)
	if !ok {
		return false
	}
	defer dict.Release()
	if dict.Len() > 0 {
		arrs := make([]arrow.Array, len(s.cols))
		fields := make([]arrow.Field, len(s.cols))
		null := array.NewNull(dict.Len())
		defer null.Release()
		for i := range arrs {
			arrs[i], fields[i] = null, arrow.Field{Name: s.names[i], Type: arrow.Null, Nullable: true}
		}
		arrs[dc.col], fields[dc.col].Type = dict, arrow.BinaryTypes.String
		rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(dict.Len()))
		mask, err := expr.EvalPredicate(mem, dc.pred, rec)
		rec.Release()
		if err != nil {
			return false
		}
		some := mask.Len() != dict.Len() || len(expr.SelectionVector(mask, nil)) > 0
		mask.Release()
		if some {
			return false
		}
	}
	if readStats(b, md, rg.NumRows, arrow.BinaryTypes.String).noNull {
		return true
	}
	v, err := dc.pred.EvalRow(make(exec.Row, len(s.cols)))
	return err == nil && v != true
}

// dictionaryOnly reports whether every data page of the chunk is
// dictionary-encoded (no page fell back to plain values the dictionary
// does not hold).
func dictionaryOnly(md *format.ColumnMetaData) bool {
	if md.DictionaryPageOffset <= 0 {
		return false
	}
	if len(md.EncodingStats) > 0 {
		for _, e := range md.EncodingStats {
			if (e.PageType == format.DataPage || e.PageType == format.DataPageV2) && e.Count > 0 &&
				e.Encoding != format.PlainDictionary && e.Encoding != format.RLEDictionary {
				return false
			}
		}
		return true
	}
	// Without page encoding statistics, the chunk's encodings must all be
	// dictionary or level encodings: a PLAIN among them may be a fallback
	// data page (or only the dictionary page; no way to tell).
	for _, e := range md.Encoding {
		switch e {
		case format.PlainDictionary, format.RLEDictionary, format.RLE, format.BitPacked:
		default:
			return false
		}
	}
	return true
}

// readDictionary reads the dictionary of the BYTE_ARRAY column chunk leaf
// of row group g as a string array in mem.
func readDictionary(mem memory.Allocator, pf *parquet.File, g, leaf int) (*array.String, bool) {
	rgs := pf.RowGroups()
	if g >= len(rgs) {
		return nil, false
	}
	chunks := rgs[g].ColumnChunks()
	if leaf >= len(chunks) {
		return nil, false
	}
	pages := chunks[leaf].Pages()
	defer pages.Close()
	dr, ok := pages.(interface {
		ReadDictionary() (parquet.Dictionary, error)
	})
	if !ok {
		return nil, false
	}
	d, err := dr.ReadDictionary()
	if err != nil || d == nil {
		return nil, false
	}
	a, err := buildDictionary(mem, d.Page().Data())
	if err != nil {
		return nil, false
	}
	return a, true
}
