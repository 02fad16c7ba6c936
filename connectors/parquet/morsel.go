package parquet

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/clink-sql/clink/connectors"
)

// A split scan with a connectors.Share does not give each part a fixed set
// of row groups: the parts take morsels, row ranges of row groups, from one
// queue as they run, so a part on a slower core (or whose rows cost more)
// takes fewer and the scan ends when the work does, not when the slowest
// fixed part does. A big row group is cut into several ranges, which also
// lets a file with fewer row groups than cores use them all.
//
// Cutting a row group needs to find the page a row is in without decoding
// the pages before it. parquet-go seeks that way only with the column
// chunk's offset index (page locations), which many writers leave out
// (pyarrow, arrow-go, DuckDB by default). Without one, the queue reads the
// page headers (a small read per page, no page data) and gives parquet-go
// the locations as the chunk's offset index (installOffsetIndex).

// MorselRows is the fewest rows a cut range of a row group has: below it,
// the pages a cut decodes twice and the per-range setup cost more than the
// balance gains. A variable so tests can cut small files.
var MorselRows int64 = 64 << 10

// morselsPerPart is how many ranges the queue aims to have for each part,
// so that the last ranges are small next to a part's share.
const morselsPerPart = 8

// morsel is rows [lo, hi) of row group group of the queue's file plan[file].
type morsel struct {
	file, group int
	lo, hi      int64
	// locs are the page locations of each scanned column's chunk, by
	// output column, when the range is a proper part of the group and
	// the file has no offset index of its own (nil otherwise).
	locs [][]format.PageLocation
	// plan is the row group's plan (pages.go), shared by its ranges.
	plan *groupPlan
}

// morselQueue hands a split scan's ranges out to its parts. Part i owns
// the i-th of n contiguous runs of ranges and takes them in order, so it
// reads its chunks front to back with one dictionary each. A part whose
// run is done takes the last range of the run with the most left (as in
// work stealing), so only the ranges that balance the parts change hands;
// but a range of a row group the part has not open costs a dictionary
// decode and mapping per column first (a few ms, about two ranges' work
// for nexmark bids), so such a range is taken only from a run with at
// least stealFar ranges left.
type morselQueue struct {
	mu sync.Mutex
	// plan is the files and row groups of the part that built the queue:
	// the parts read through it, since a Dataset's parts could have
	// listed the directory at different times.
	plan []scanFile
	ms   []morsel
	runs [][2]int // per part: next range, end of its run
	err  error    // building failed: every part reports it
	cut  int      // row groups cut into more than one range
}

// stealFar is how many ranges a run must have left for another part to
// take one from a row group it does not have open.
const stealFar = 3

// take returns part's next range. open says whether the part has a
// range's row group open (its chunks' dictionaries read).
func (q *morselQueue) take(part int, open func(morsel) bool) (morsel, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := &q.runs[part]
	if r[0] < r[1] {
		r[0]++
		return q.ms[r[0]-1], true
	}
	most := -1
	for j := range q.runs {
		n := q.runs[j][1] - q.runs[j][0]
		if n <= 0 {
			continue
		}
		if n < stealFar && !open(q.ms[q.runs[j][1]-1]) {
			continue
		}
		if most < 0 || n > q.runs[most][1]-q.runs[most][0] {
			most = j
		}
	}
	if most < 0 {
		return morsel{}, false
	}
	q.runs[most][1]--
	return q.ms[q.runs[most][1]], true
}

// split gives each of parts a contiguous run of ranges, balanced by rows.
func (q *morselQueue) split(parts int) {
	var rows int64
	for _, m := range q.ms {
		rows += m.hi - m.lo
	}
	q.runs = make([][2]int, parts)
	i := 0
	var done int64
	for p := range q.runs {
		q.runs[p][0] = i
		// Take ranges while the rows so far stay nearer p+1 parts' share.
		end := rows * int64(p+1) / int64(parts)
		for i < len(q.ms) && (p == parts-1 || done+(q.ms[i].hi-q.ms[i].lo)/2 <= end) {
			done += q.ms[i].hi - q.ms[i].lo
			i++
		}
		q.runs[p][1] = i
	}
}

// RowRanges is for EXPLAIN: whether this part takes row ranges from a
// shared queue, how many it read, and (the first part only, once the queue
// is built) how many row groups the queue cut into several ranges.
func (s *Source) RowRanges() (shared bool, ranges int64, cut int) {
	if s.share == nil {
		return false, 0, 0
	}
	if s.first {
		if q, ok := s.share.Peek().(*morselQueue); ok {
			cut = q.cut
		}
	}
	return true, s.ranges.Load(), cut
}

// queue returns the scan's shared queue, building it on the first call.
func (s *Source) queue(share *connectors.Share) *morselQueue {
	return share.Get(func() any { return s.buildQueue() }).(*morselQueue)
}

// buildQueue lists the ranges of every row group the scan reads. Only the
// first part to run builds it; the others wait for it (Share.Get).
func (s *Source) buildQueue() (q *morselQueue) {
	q = &morselQueue{plan: s.plan}
	defer func() {
		// Every part reports a failed build; none may see a nil queue.
		if r := recover(); r != nil {
			q = &morselQueue{plan: s.plan, err: fmt.Errorf("parquet: planning row ranges: %v", r)}
			q.split(max(1, s.splits))
		}
	}()
	plans, err := s.planGroups()
	if err != nil {
		q.err = err
		q.split(s.splits)
		return q
	}
	var rows int64
	for fi, sf := range s.plan {
		for j, g := range sf.groups {
			if plans[fi][j].skip == skipNone {
				rows += sf.fi.meta.RowGroups[g].NumRows
			}
		}
	}
	size := max(MorselRows, rows/int64(s.splits*morselsPerPart))
	for fi, sf := range s.plan {
		for j, g := range sf.groups {
			gp := plans[fi][j]
			if gp.skip != skipNone {
				continue
			}
			n := sf.fi.meta.RowGroups[g].NumRows
			if n < 2*size {
				q.ms = append(q.ms, morsel{file: fi, group: g, lo: 0, hi: n, plan: gp})
				continue
			}
			ms, err := s.cutGroup(sf.fi, fi, g, n, size)
			if err != nil {
				q.err = err
				return q
			}
			if len(ms) > 1 {
				q.cut++
			}
			for _, m := range ms {
				// A range the page statistics rule out entirely is not queued.
				if m.plan = gp; gp.runs == nil || len(clipRuns(gp.runs, m.lo, m.hi)) > 0 {
					q.ms = append(q.ms, m)
				}
			}
		}
	}
	q.split(s.splits)
	return q
}

// planGroups plans every row group of the scan (planGroup), by file and
// group in s.plan's order, opening each file only when there is anything
// finer than its row groups to skip by.
func (s *Source) planGroups() ([][]*groupPlan, error) {
	plans := make([][]*groupPlan, len(s.plan))
	for fi, sf := range s.plan {
		plans[fi] = make([]*groupPlan, len(sf.groups))
		if s.rowGroupsOnly || (len(s.filters) == 0 && len(s.dictConj) == 0) {
			for j := range plans[fi] {
				plans[fi][j] = &groupPlan{}
			}
			continue
		}
		osf, pf, err := openFile(sf.fi.path)
		if err != nil {
			return nil, err
		}
		for j, g := range sf.groups {
			if plans[fi][j], err = s.planGroup(s.mem, osf, pf, sf.fi, g); err != nil {
				osf.Close()
				return nil, err
			}
		}
		osf.Close()
	}
	return plans, nil
}

// cutGroup cuts row group g (n rows) into ranges of about size rows. A cut
// lands on a page boundary of as many columns as it can (by compressed
// bytes), because a column whose page straddles a cut decodes that page in
// both ranges. A group whose page locations cannot be read is one range.
func (s *Source) cutGroup(fi *fileInfo, file, g int, n, size int64) ([]morsel, error) {
	whole := []morsel{{file: file, group: g, lo: 0, hi: n}}
	locs, err := s.pageLocations(fi, g)
	if err != nil {
		return nil, err
	}
	if locs == nil {
		return whole, nil
	}
	// Candidate cuts: every page start of every column, weighed by the
	// bytes a cut there would decode twice.
	var starts []int64
	for _, l := range locs {
		for _, p := range l[1:] {
			starts = append(starts, p.FirstRowIndex)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	cost := func(r int64) int64 {
		var c int64
		for _, l := range locs {
			i := sort.Search(len(l), func(i int) bool { return l[i].FirstRowIndex > r }) - 1
			if i >= 0 && l[i].FirstRowIndex != r {
				c += int64(l[i].CompressedPageSize)
			}
		}
		return c
	}
	k := n / size
	var cuts []int64
	prev := int64(0)
	for i := int64(1); i < k; i++ {
		want := n * i / k
		best, bestCost := want, cost(want)
		// Look for a cheaper cut within a quarter range of the ideal.
		lo, hi := want-size/4, want+size/4
		j := sort.Search(len(starts), func(j int) bool { return starts[j] >= lo })
		for ; j < len(starts) && starts[j] <= hi; j++ {
			if c := cost(starts[j]); c < bestCost || (c == bestCost && abs64(starts[j]-want) < abs64(best-want)) {
				best, bestCost = starts[j], c
			}
		}
		if best <= prev || best >= n {
			continue
		}
		cuts = append(cuts, best)
		prev = best
	}
	if len(cuts) == 0 {
		return whole, nil
	}
	var ms []morsel
	lo := int64(0)
	for _, c := range append(cuts, n) {
		ms = append(ms, morsel{file: file, group: g, lo: lo, hi: c, locs: locs})
		lo = c
	}
	return ms, nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// pageLocations reads where each scanned column's data pages start in row
// group g, from the page headers. nil (no error) means the group cannot be
// cut: a chunk whose dictionary page is not where the footer says, an
// encrypted or unreadable header, or a page count that does not add up.
func (s *Source) pageLocations(fi *fileInfo, g int) ([][]format.PageLocation, error) {
	f, err := os.Open(fi.path)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	defer f.Close()
	rg := &fi.meta.RowGroups[g]
	locs := make([][]format.PageLocation, len(s.cols))
	for i, c := range s.cols {
		md := &rg.Columns[fi.cols[c].leaf].MetaData
		l, ok := chunkPages(f, md, rg.NumRows)
		if !ok {
			return nil, nil
		}
		locs[i] = l
	}
	return locs, nil
}

// chunkPages walks a column chunk's page headers with small reads and
// returns its data pages' locations. Flat columns only (what the scan
// reads), where a page's value count is its row count.
func chunkPages(r io.ReaderAt, md *format.ColumnMetaData, rows int64) ([]format.PageLocation, bool) {
	pages, ok := chunkPageHeaders(r, md, rows)
	if !ok {
		return nil, false
	}
	return pageLocs(pages), true
}

// chunkPageHeaders is chunkPages with each page's row count and the
// statistics its header carries.
func chunkPageHeaders(r io.ReaderAt, md *format.ColumnMetaData, rows int64) ([]pageStat, bool) {
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		start = md.DictionaryPageOffset
	}
	end := start + md.TotalCompressedSize
	var pages []pageStat
	var row int64
	buf := make([]byte, 256)
	proto := &thrift.CompactProtocol{}
	for off := start; off < end && row < rows; {
		var h format.PageHeader
		hlen, ok := readPageHeader(r, proto, off, end, buf, &h)
		if !ok || h.CompressedPageSize < 0 {
			return nil, false
		}
		size := int64(hlen) + int64(h.CompressedPageSize)
		switch h.Type {
		case format.DictionaryPage:
			// parquet-go reads a chunk's dictionary before a sought page
			// only from the footer's dictionary offset.
			if md.DictionaryPageOffset != off {
				return nil, false
			}
		case format.DataPage, format.DataPageV2:
			p := pageStat{loc: format.PageLocation{Offset: off, CompressedPageSize: int32(size), FirstRowIndex: row}}
			if h.Type == format.DataPage {
				v := &h.DataPageHeader.V
				p.rows, p.stats = int64(v.NumValues), v.Statistics
			} else {
				v := &h.DataPageHeaderV2.V
				p.rows, p.stats = int64(v.NumRows), v.Statistics
				p.stats.NullCount, p.exactNulls = int64(v.NumNulls), true
			}
			if p.rows <= 0 {
				return nil, false
			}
			// The header was decoded in place: its byte strings are views
			// of buf, which the next header overwrites.
			st := &p.stats
			st.Min, st.Max = bytes.Clone(st.Min), bytes.Clone(st.Max)
			st.MinValue, st.MaxValue = bytes.Clone(st.MinValue), bytes.Clone(st.MaxValue)
			pages = append(pages, p)
			row += p.rows
		}
		off += size
	}
	if row != rows || len(pages) == 0 {
		return nil, false
	}
	return pages, true
}

// readPageHeader decodes the page header at off, reading more than buf
// when the header (its statistics) is longer. It returns the header's
// length in bytes.
func readPageHeader(r io.ReaderAt, proto *thrift.CompactProtocol, off, end int64, buf []byte, h *format.PageHeader) (int, bool) {
	for size := len(buf); ; size *= 4 {
		if int64(size) > end-off {
			size = int(end - off)
		}
		if size > len(buf) {
			buf = make([]byte, size)
		}
		b := buf[:size]
		n, err := r.ReadAt(b, off)
		if n < size && err != nil && err != io.EOF {
			return 0, false
		}
		b = b[:n]
		*h = format.PageHeader{}
		pr := proto.NewReaderFromBytes(b)
		if err := thrift.NewDecoder(pr).Decode(h); err == nil {
			return pr.BytesRead(), true
		}
		if int64(size) >= end-off || size >= 1<<20 {
			return 0, false
		}
	}
}

// installOffsetIndex gives parquet-go the page locations of a column chunk
// that has no offset index in the file, so FilePages.SeekToRow jumps to the
// page a row is in. parquet-go reads a chunk's offset index from where the
// footer says (OffsetIndexOffset, OffsetIndexLength, in pf's own parsed
// footer) through the reader it is given: the index is encoded and served
// from memory at an offset past the file's end. TestSeekWithoutOffsetIndex
// guards this against a parquet-go that reads it another way.
func installOffsetIndex(pf *parquet.File, g, leaf int, cc parquet.ColumnChunk, locs []format.PageLocation) error {
	fc, ok := cc.(*parquet.FileColumnChunk)
	if !ok {
		return fmt.Errorf("column chunk is a %T, not a file's", cc)
	}
	ch := &pf.Metadata().RowGroups[g].Columns[leaf]
	if ch.OffsetIndexOffset != 0 {
		// The file's own index, or the one installed before: parquet-go
		// reads it once and keeps it.
		_, err := fc.OffsetIndex()
		return err
	}
	data, err := thrift.Marshal(&thrift.CompactProtocol{}, &format.OffsetIndex{PageLocations: locs})
	if err != nil {
		return err
	}
	at := pf.Size() + 1<<20
	ch.OffsetIndexOffset, ch.OffsetIndexLength = at, int32(len(data))
	_, err = fc.OffsetIndexFrom(memAt{at: at, data: data})
	return err
}

// memAt serves data at offset at, as if it were there in a file.
type memAt struct {
	at   int64
	data []byte
}

func (m memAt) ReadAt(p []byte, off int64) (int, error) {
	if off < m.at || off >= m.at+int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off-m.at:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
