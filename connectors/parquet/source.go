package parquet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/recycle"
)

// DefaultBatchSize is the rows per batch when the planner does not say.
// Batches never cross a row group, so a group smaller than this gives
// smaller batches.
const DefaultBatchSize = 8192

// RecycleLimit is how many bytes of released output blocks a running scan
// keeps for reuse: a few batches' worth (8192 nexmark bids are about 1.5 MB
// of buffers). The runner is push-based, so a batch is usually released
// before the next one is read, and its blocks are what that next batch is
// built in.
const RecycleLimit = 8 << 20

// Source scans a Table: the spec's columns, in its order, as born-columnar
// batches. Row groups excluded by the spec's filters are skipped; the plan
// (and so RowGroups) is fixed when the source is made.
type Source struct {
	mem       memory.Allocator
	schema    *arrow.Schema
	cols      []int // table column of each output column
	names     []string
	optional  []bool
	batchSize int
	progress  *exec.Progress
	plan      []scanFile
	total     int
	skipped   int
	filters   []connectors.ColumnFilter

	// Dictionary output (dict.go): what SetDictionaryColumns asked for,
	// which output columns it applies to (STRING ones), and the schema of a
	// batch where all of those are dictionary arrays.
	dictCols   []int
	wantDict   []bool
	dictSchema *arrow.Schema
	// Column batches of those columns handed out as codes and as plain
	// strings (a file's fallback pages), for EXPLAIN ANALYZE.
	dictBatches, plainBatches atomic.Int64

	// share, for a part of a split scan: the parts take row ranges from
	// one queue as they run (morsel.go) instead of fixed row groups.
	share  *connectors.Share
	splits int
	part   int          // this part's number (spec.Split)
	first  bool         // the first part, which counts the scan's row groups
	ranges atomic.Int64 // ranges this part read

	// Finer skipping and late materialisation (pages.go, late.go), off
	// with rowGroupsOnly: the predicate the scan evaluates (nil when
	// none), its one-column conjuncts tested against dictionaries, and
	// what they did.
	rowGroupsOnly bool
	tableSchema   *arrow.Schema
	all           []int // every output column
	late          *lateMat
	dictConj      []dictConjunct
	counts        scanCounts
	pages         pageCounts
}

// scanCounts are the scan's counters behind connectors.ScanCounts.
type scanCounts struct {
	groupsDict, groupsPages, rowsPages atomic.Int64
	evaluated, passed, decoded         atomic.Int64
	unfiltered                         atomic.Int64
}

type scanFile struct {
	fi     *fileInfo
	groups []int
}

var _ exec.Source = (*Source)(nil)

// NewSource validates spec and plans the scan: it reads only footers
// (already in memory), so it does no I/O.
func (t *Table) NewSource(spec connectors.ScanSpec) (*Source, error) {
	s := &Source{mem: t.mem, batchSize: spec.BatchSize, progress: spec.Progress, filters: spec.Filters}
	if s.batchSize <= 0 {
		s.batchSize = DefaultBatchSize
	}
	s.cols = spec.Columns
	if s.cols == nil {
		s.cols = make([]int, t.schema.NumFields())
		for i := range s.cols {
			s.cols[i] = i
		}
	}
	fields := make([]arrow.Field, len(s.cols))
	for i, c := range s.cols {
		if c < 0 || c >= t.schema.NumFields() {
			return nil, fmt.Errorf("parquet: %s: column index %d out of range (%d columns)", t.path, c, t.schema.NumFields())
		}
		fields[i] = t.schema.Field(c)
		s.names = append(s.names, fields[i].Name)
	}
	s.schema = arrow.NewSchema(fields, nil)
	s.tableSchema = t.schema
	s.all = make([]int, len(s.cols))
	for i := range s.all {
		s.all[i] = i
	}
	s.rowGroupsOnly = spec.RowGroupsOnly
	if !s.rowGroupsOnly {
		s.late = newLateMat(spec.Predicate, s.schema, s.batchSize)
		s.dictConj = dictConjuncts(spec.Predicate, s.schema)
	}

	var rows, bytes int64
	shared := spec.Splits > 1 && spec.Share != nil
	if shared {
		s.share, s.splits, s.part, s.first = spec.Share, spec.Splits, spec.Split, spec.Split == 0
	}
	gi := -1 // row group number across the files, for splits
	for _, fi := range t.files {
		sf := scanFile{fi: fi}
		for g := range fi.meta.RowGroups {
			gi++
			if spec.Splits > 1 && !shared && gi%spec.Splits != spec.Split {
				continue // another split's row group
			}
			rg := &fi.meta.RowGroups[g]
			s.total++
			if !groupMatches(fi, rg, t.schema, spec.Filters) {
				s.skipped++
				continue
			}
			sf.groups = append(sf.groups, g)
			rows += rg.NumRows
			for _, c := range s.cols {
				bytes += rg.Columns[fi.cols[c].leaf].MetaData.TotalCompressedSize
			}
		}
		if len(sf.groups) > 0 {
			s.plan = append(s.plan, sf)
		}
	}
	if shared && spec.Split > 0 {
		// Every part plans the whole scan (the queue is built from any
		// of them); the first one counts it.
		s.total, s.skipped, rows, bytes = 0, 0, 0, 0
	}
	if s.progress != nil {
		s.progress.RowsTotal.Add(rows)
		s.progress.BytesTotal.Add(bytes)
	}
	return s, nil
}

// SetDictionaryColumns asks for the given output columns (indexes into
// s.Schema()) as Arrow dictionary arrays where the file has them
// dictionary-encoded. Called before Run.
//
// Only STRING columns stored as BYTE_ARRAY are affected; other indexes are
// ignored. Such a column's array in a batch is an *array.Dictionary (int32
// codes into the column chunk's dictionary, shared by the chunk's batches)
// when every page the batch's rows come from is dictionary-encoded, and a
// plain *array.String otherwise; the batch's record schema says which, so
// consecutive batches may differ in that field's type.
func (s *Source) SetDictionaryColumns(cols []int) {
	s.dictCols = append([]int(nil), cols...)
	s.wantDict = make([]bool, len(s.cols))
	fields := append([]arrow.Field(nil), s.schema.Fields()...)
	for _, c := range cols {
		if c >= 0 && c < len(fields) && fields[c].Type.ID() == arrow.STRING {
			s.wantDict[c] = true
			fields[c].Type = dictStringType
		}
	}
	s.dictSchema = arrow.NewSchema(fields, nil)
}

// DictionaryColumns returns what SetDictionaryColumns asked for (for EXPLAIN).
func (s *Source) DictionaryColumns() []int { return append([]int(nil), s.dictCols...) }

// DictionaryBatches counts the column batches of the dictionary columns
// handed out as codes and as plain strings so far.
func (s *Source) DictionaryBatches() (dict, plain int64) {
	return s.dictBatches.Load(), s.plainBatches.Load()
}

// Kind is "parquet-scan".
func (s *Source) Kind() string { return "parquet-scan" }

// Capabilities: every batch is born columnar.
func (s *Source) Capabilities() exec.Capabilities {
	return exec.Capabilities{EmitsColumnar: true}
}

// Schema is the schema of the emitted batches.
func (s *Source) Schema() *arrow.Schema { return s.schema }

// RowGroups reports, for EXPLAIN, how many row groups the table has and
// how many the filters let the scan skip.
func (s *Source) RowGroups() (total, skipped int) { return s.total, s.skipped }

// ScanCounts reports what the scan skipped and evaluated so far.
func (s *Source) ScanCounts() connectors.ScanCounts {
	return connectors.ScanCounts{
		RowGroupsByDictionary: s.counts.groupsDict.Load(),
		RowGroupsByPages:      s.counts.groupsPages.Load(),
		RowsByPages:           s.counts.rowsPages.Load(),
		PagesRead:             s.pages.read.Load(),
		PageBytes:             s.pages.bytes.Load(),
		PagesJumped:           s.pages.jumped.Load(),
		RowsEvaluated:         s.counts.evaluated.Load(),
		RowsPassed:            s.counts.passed.Load(),
		RowsDecoded:           s.counts.decoded.Load(),
		BatchesUnevaluated:    s.counts.unfiltered.Load(),
	}
}

// Filters are the filters the source was given (it used them to skip row
// groups; the planner still evaluates them above the scan).
func (s *Source) Filters() []connectors.ColumnFilter { return s.filters }

// Run emits the planned row groups as batches of at most the batch size,
// then the final watermark. It stops with ctx.Err() when ctx is cancelled
// and with nil when an Emit answers exec.ErrStop.
//
// The batches are built in a recycle.Allocator over the table's allocator:
// fresh memory from the Go allocator (zeroed, faulted in page by page,
// handed back to the OS by the scavenger) was the largest cost of a full
// scan, more than decoding. Handing out unzeroed blocks is safe because
// every byte of every buffer a batch exposes is written by the readers
// (outCol documents how), and consumers follow the Arrow contract the
// keyed exchange already relies on (see shuffle.NewExchange). The engine's
// tests run with CLINK_PARQUET_RECYCLE=poison to keep both true;
// CLINK_PARQUET_RECYCLE=off is the A/B switch back to the table's
// allocator.
func (s *Source) Run(ctx context.Context, out exec.Emitter) error {
	mem := s.mem
	if r := recycle.FromEnv("CLINK_PARQUET_RECYCLE", s.mem, RecycleLimit); r != nil {
		// Close hands the kept blocks back; batches still held downstream
		// hand theirs back when released.
		defer r.Close()
		mem = r
	}
	rs := &runState{mem: mem, readers: make([]colReader, len(s.cols)), hints: make([]sizeHint, len(s.cols))}
	for i := range rs.readers {
		rs.readers[i].name = s.names[i]
		rs.readers[i].mem = mem
		rs.readers[i].counts = &s.pages
	}
	defer closeReaders(rs.readers)
	if s.share != nil {
		stop, err := s.runShared(ctx, rs, out)
		if err != nil || stop {
			return err
		}
	} else {
		for _, sf := range s.plan {
			stop, err := s.runFile(ctx, rs, sf, out)
			if err != nil {
				return err
			}
			if stop {
				return nil
			}
		}
	}
	if err := out.EmitWatermark(ctx, exec.MaxWatermark); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	return nil
}

// runState is what one Run reads with: the batch allocator, a reader per
// output column, each column's size hint, and the open file.
type runState struct {
	mem     memory.Allocator
	readers []colReader
	hints   []sizeHint
	osf     *os.File
	pf      *parquet.File
	window  []rowRun // scratch for a batch's runs
}

// sizeHint is the data size of a string column's last batch, so the next
// one reserves about what it needs (scaled to its rows).
type sizeHint struct{ bytes, rows int }

func (h sizeHint) forRows(k int) int {
	if h.rows == 0 {
		return 0
	}
	n := h.bytes * k / h.rows
	return n + n/8
}

func (s *Source) runFile(ctx context.Context, rs *runState, sf scanFile, out exec.Emitter) (stop bool, err error) {
	path := sf.fi.path
	osf, pf, err := openFile(path)
	if err != nil {
		return false, err
	}
	defer osf.Close()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet: %s: corrupt file: %v", path, r)
		}
	}()
	defer closeReaders(rs.readers) // they read from osf
	rs.osf, rs.pf = osf, pf
	for _, g := range sf.groups {
		n := sf.fi.meta.RowGroups[g].NumRows
		gp, err := s.planGroup(rs.mem, osf, pf, sf.fi, g)
		if err != nil {
			return false, err
		}
		if gp.skip != skipNone {
			continue
		}
		if stop, err := s.readRange(ctx, rs, sf.fi, morsel{group: g, lo: 0, hi: n, plan: gp}, out); stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// runShared reads ranges from the scan's shared queue until it is empty,
// keeping the last range's file open for the next.
func (s *Source) runShared(ctx context.Context, rs *runState, out exec.Emitter) (stop bool, err error) {
	q := s.queue(s.share)
	if q.err != nil {
		return false, q.err
	}
	readers := rs.readers
	cur := -1
	defer func() {
		if rs.osf != nil {
			closeReaders(readers)
			rs.osf.Close()
			rs.osf, rs.pf = nil, nil
		}
	}()
	open := func(m morsel) bool {
		return len(readers) == 0 || (m.file == cur && readers[0].chunk.file != nil && readers[0].chunk.group == m.group)
	}
	for {
		m, ok := q.take(s.part, open)
		if !ok {
			return false, nil
		}
		sf := q.plan[m.file]
		if m.file != cur {
			if rs.osf != nil {
				closeReaders(readers)
				rs.osf.Close()
				rs.osf, rs.pf = nil, nil
			}
			if rs.osf, rs.pf, err = openFile(sf.fi.path); err != nil {
				return false, err
			}
			cur = m.file
		}
		s.ranges.Add(1)
		if stop, err := s.readFileRange(ctx, rs, sf.fi, m, out); stop || err != nil {
			return stop, err
		}
	}
}

// readFileRange is readRange with a corrupt file's panic (parquet-go can
// panic on bad input) turned into an error naming the file.
func (s *Source) readFileRange(ctx context.Context, rs *runState, fi *fileInfo, m morsel, out exec.Emitter) (stop bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("parquet: %s: corrupt file: %v", fi.path, r)
		}
	}()
	return s.readRange(ctx, rs, fi, m, out)
}

// readRange reads rows [m.lo, m.hi) of row group m.group of the open file,
// those of them the group's plan leaves (page statistics), in batches of
// at most the batch size.
func (s *Source) readRange(ctx context.Context, rs *runState, fi *fileInfo, m morsel, out exec.Emitter) (stop bool, err error) {
	path, g, pf := fi.path, m.group, rs.pf
	rgs := pf.RowGroups()
	if g >= len(rgs) {
		return false, fmt.Errorf("parquet: %s: row group %d is missing (the file changed since it was opened?)", path, g)
	}
	rg := rgs[g]
	if rg.NumRows() < m.hi {
		return false, fmt.Errorf("parquet: %s: row group %d has %d rows, not %d (the file changed since it was opened?)", path, g, rg.NumRows(), m.hi)
	}
	chunks := rg.ColumnChunks()
	meta := pf.Metadata()
	var bytes int64
	for i, c := range s.cols {
		b := fi.cols[c]
		if b.leaf >= len(chunks) || b.leaf >= len(meta.RowGroups[g].Columns) {
			return false, fmt.Errorf("parquet: %s: row group %d: column %s has no column chunk", path, g, s.names[i])
		}
		r := &rs.readers[i]
		key := chunkKey{file: pf, group: g, leaf: b.leaf}
		if r.chunk != key {
			src := chunkSource{f: rs.osf, pf: pf, cc: chunks[b.leaf], md: &meta.RowGroups[g].Columns[b.leaf].MetaData, g: g, leaf: b.leaf, rows: rg.NumRows()}
			r.reset(b, chunks[b.leaf].Pages(), s.wantDict != nil && s.wantDict[i], src)
			r.chunk = key
		}
		// Locations found on the way (cutting the group, reading page
		// statistics) save the reader reading the page headers again.
		locs := m.locs
		if locs == nil && m.plan != nil {
			locs = m.plan.locs
		}
		if locs != nil {
			if err := r.setLocations(locs[i]); err != nil {
				return false, fmt.Errorf("parquet: %s: row group %d, column %s: page locations: %w", path, g, s.names[i], err)
			}
		}
		bytes += fi.meta.RowGroups[g].Columns[b.leaf].MetaData.TotalCompressedSize
	}
	var runs []rowRun
	if m.plan != nil {
		runs = m.plan.runs
	}
	runs = clipRuns(runs, m.lo, m.hi)
	n := runRows(runs)
	if s.progress != nil {
		s.progress.BytesRead.Add(bytes * n / max(1, rg.NumRows()))
		// Rows the page statistics excluded count as done.
		s.progress.RowsRead.Add(m.hi - m.lo - n)
	}
	for len(runs) > 0 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		var window []rowRun
		window, runs = takeRuns(runs, int64(s.batchSize), rs.window)
		rs.window = window
		k := int(runRows(window))
		rec, err := s.readWindow(rs, window, k, path, g)
		if err != nil {
			return false, err
		}
		if rec != nil {
			b := exec.NewColumnarBatch(rec)
			err = out.Emit(ctx, b)
			b.Release()
			if errors.Is(err, exec.ErrStop) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
		}
		if s.progress != nil {
			s.progress.RowsRead.Add(int64(k))
		}
	}
	return false, nil
}

func closeReaders(readers []colReader) {
	for i := range readers {
		readers[i].close()
	}
}

// batchSchema is the schema of a batch with columns cols: s.schema, or
// with some STRING fields as dictionaries (see SetDictionaryColumns).
func (s *Source) batchSchema(cols []arrow.Array) *arrow.Schema {
	if s.dictSchema == nil {
		return s.schema
	}
	plain, dict := true, true
	for i, c := range cols {
		t := c.DataType()
		plain = plain && arrow.TypeEqual(t, s.schema.Field(i).Type)
		dict = dict && arrow.TypeEqual(t, s.dictSchema.Field(i).Type)
	}
	switch {
	case plain:
		return s.schema
	case dict:
		return s.dictSchema
	}
	fields := append([]arrow.Field(nil), s.schema.Fields()...)
	for i, c := range cols {
		fields[i].Type = c.DataType()
	}
	return arrow.NewSchema(fields, nil)
}

// readWindow reads the rows of window (k of them) as one batch: every
// column, or, with a predicate to evaluate, its columns first and the
// others only for the rows that pass (late.go). nil when no row passes.
func (s *Source) readWindow(rs *runState, window []rowRun, k int, path string, g int) (arrow.RecordBatch, error) {
	if s.late != nil && s.late.evaluate() {
		return s.readLate(rs, window, k, path, g)
	}
	if s.late != nil {
		s.counts.unfiltered.Add(1)
	}
	cols := make([]arrow.Array, len(s.cols))
	if err := s.readColumns(rs, s.all, cols, window, k, path, g); err != nil {
		return nil, err
	}
	return s.record(cols, k), nil
}

// record makes a batch of k rows of the output columns cols (taking over
// their references), and counts the dictionary columns' batches.
func (s *Source) record(cols []arrow.Array, k int) arrow.RecordBatch {
	for i, c := range cols {
		if s.wantDict != nil && s.wantDict[i] {
			if c.DataType().ID() == arrow.DICTIONARY {
				s.dictBatches.Add(1)
			} else {
				s.plainBatches.Add(1)
			}
		}
	}
	rec := array.NewRecordBatch(s.batchSchema(cols), cols, int64(k))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// readColumns reads the rows of runs (k in all) of the output columns
// which into dst[c] for each c of which. A panic inside parquet-go
// (corrupt pages) becomes an error naming the file, column and row group,
// and frees what the batch had allocated.
func (s *Source) readColumns(rs *runState, which []int, dst []arrow.Array, runs []rowRun, k int, path string, g int) (err error) {
	return s.readColumnsWith(rs, which, dst, runs, k, path, g, false)
}

// readColumnsPicked is readColumns for runs of a few rows each (the rows a
// selective predicate passes): each page's rows are picked out at once
// (pick.go).
func (s *Source) readColumnsPicked(rs *runState, which []int, dst []arrow.Array, runs []rowRun, k int, path string, g int) (err error) {
	return s.readColumnsWith(rs, which, dst, runs, k, path, g, true)
}

func (s *Source) readColumnsWith(rs *runState, which []int, dst []arrow.Array, runs []rowRun, k int, path string, g int, picked bool) (err error) {
	var o outCol
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt data: %v", r)
		}
		if err != nil {
			o.release()
			for _, c := range which {
				if dst[c] != nil {
					dst[c].Release()
					dst[c] = nil
				}
			}
			name := ""
			if cur >= 0 {
				name = ", column " + rs.readers[cur].name
			}
			err = fmt.Errorf("parquet: %s: row group %d%s: %w", path, g, name, err)
		}
	}()
	for _, i := range which {
		cur = i
		r := &rs.readers[i]
		if len(runs) > 0 {
			// The batch's first row decides whether a dictionary column
			// starts as codes.
			if err := r.skipTo(runs[0].lo); err != nil {
				return err
			}
		}
		optional, hint := r.b.maxDef > 0, rs.hints[i].forRows(k)
		dict, err := r.startsDict()
		if err != nil {
			return err
		}
		if dict {
			o.initDict(rs.mem, k, optional, r.dictArr, hint)
		} else {
			o.init(rs.mem, s.schema.Field(i).Type, k, optional, hint)
		}
		if picked {
			err = r.readPicked(&o, runs)
		} else {
			err = r.readRuns(&o, 0, runs)
		}
		if err != nil {
			return err
		}
		if o.dict == nil && o.offBuf != nil {
			rs.hints[i] = sizeHint{bytes: o.dataLen, rows: k}
		}
		dst[i] = o.finish()
	}
	return nil
}
