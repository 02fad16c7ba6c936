package ops

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// TopN is ORDER BY ... LIMIT n over a bounded input: it keeps the best n
// rows it has seen in a heap and emits them in order when the input ends.
// The planner runs one per input subtask (each keeps its n best) and one
// more over their results, so only n rows per subtask cross to the final.
//
// Rows compare by normalised keys (sort_key.go). A batch's keys are built
// at once; a full heap rejects a row with one compare against its worst
// (the heap's top), and only rows that beat it touch the heap. The rows
// the heap keeps stay where they came: a record that keeps at least half
// of its rows is retained, the few winners of another are copied out
// (gathered), so a top-10 over wide rows does not hold whole batches; the
// held records are compacted into one when they outgrow the limit. Ties
// keep arrival order (an earlier row wins), as the stable sort does.
//
// Key types without a normalised form (ROW, ARRAY, INTERVAL, UBIGINT)
// take the row path and compare with rowComparator.
type TopN struct {
	keys  []SortKey
	limit int64
	mem   memory.Allocator

	schema *arrow.Schema
	nk     *normKeys // nil: compare rows with cmpRows
	w      int       // key bytes per slot
	// long: a string key longer than its prefix was seen, so keys compare
	// with compareKeys (full strings after an equal prefix).
	long    bool
	cmpRows func(a, b exec.Row) int

	// Slot s is one row the heap may hold: its key keyBuf[s*w:(s+1)*w],
	// where its values are, and its arrival number. heap lists the kept
	// slots, worst first; spare is the slot a candidate is written to.
	heap   []int32
	keyBuf []byte
	refs   []cellRef // arr: an index into recs, or rowRef for rows[row]
	seqs   []int64
	seq    int64
	spare  int32

	recs    []arrow.RecordBatch
	recRows int
	rows    []exec.Row
	scratch []byte  // the keys of a batch's listed rows
	sel     []int32 // a batch's rows that may enter (preselect)

	heldWM   int64
	finished bool
}

// rowRef marks a kept row held in row form.
const rowRef = -1

// maxHeldRecs bounds the records a top-n holds between compactions.
const maxHeldRecs = 64

// NewTopN returns ORDER BY keys LIMIT limit (limit >= 0; a LIMIT with an
// OFFSET keeps limit+offset rows and a Limit after it skips the offset).
func NewTopN(keys []SortKey, limit int64, mem memory.Allocator) *TopN {
	return &TopN{keys: keys, limit: max(limit, 0), mem: mem, heldWM: exec.MinWatermark, spare: -1}
}

// Kind implements exec.Operator.
func (t *TopN) Kind() string { return "top_n" }

// Capabilities implements exec.Operator: columnar input is ranked by its
// arrays and the winners leave columnar.
func (t *TopN) Capabilities() exec.Capabilities {
	return exec.Capabilities{IngestsColumnar: true, PassesThrough: true}
}

// Keys are the sort keys, for EXPLAIN.
func (t *TopN) Keys() []SortKey { return t.keys }

func (t *TopN) check(schema *arrow.Schema) error {
	if t.schema != nil {
		return nil
	}
	if err := checkSortKeys(t.keys, schema); err != nil {
		return err
	}
	t.schema = schema
	if nk, ok := newNormKeys(schema, t.keys); ok {
		t.nk, t.w = nk, nk.width
	} else {
		t.cmpRows = rowComparator(t.keys)
	}
	return nil
}

func (t *TopN) full() bool { return int64(len(t.heap)) >= t.limit }

func (t *TopN) slotKey(s int32) []byte { return t.keyBuf[int(s)*t.w : int(s+1)*t.w] }

func (t *TopN) newSlot() int32 {
	s := int32(len(t.refs))
	t.keyBuf = append(t.keyBuf, make([]byte, t.w)...)
	t.refs = append(t.refs, cellRef{})
	t.seqs = append(t.seqs, 0)
	return s
}

// cmpSlots orders two slots: by key, full strings when the keys tie and a
// long string was seen, then arrival.
func (t *TopN) cmpSlots(a, b int32) int {
	if t.nk != nil {
		var c int
		if t.long {
			c = compareKeys(t.nk, t.slotKey(a), t.slotKey(b), t.refs[a], t.refs[b], t.refString, nil)
		} else {
			c = bytes.Compare(t.slotKey(a), t.slotKey(b))
		}
		if c != 0 {
			return c
		}
	} else if c := t.cmpRows(t.rows[t.refs[a].row], t.rows[t.refs[b].row]); c != 0 {
		return c
	}
	return cmpOrdered(t.seqs[a], t.seqs[b])
}

// refString is a kept or candidate row's value of a string column.
func (t *TopN) refString(r cellRef, col int) []byte {
	if r.arr == rowRef {
		b, _ := valueBytes(t.rows[r.row][col])
		return b
	}
	arr := t.recs[r.arr].Column(col)
	if arr.IsNull(int(r.row)) {
		return nil
	}
	b, _ := arrayString(arr, int(r.row))
	return b
}

// offer makes the candidate in the spare slot compete: it joins a heap
// that is not full, or replaces the worst row when it is better. It
// reports whether the candidate was kept.
func (t *TopN) offer() bool {
	s := t.spare
	t.seq++
	t.seqs[s] = t.seq
	if !t.full() {
		t.spare = -1
		t.heap = append(t.heap, s)
		t.siftUp(len(t.heap) - 1)
		return true
	}
	top := t.heap[0]
	if t.cmpSlots(s, top) >= 0 {
		return false
	}
	t.heap[0], t.spare = s, top
	t.siftDown(0)
	return true
}

func (t *TopN) takeSpare() int32 {
	if t.spare < 0 {
		t.spare = t.newSlot()
	}
	return t.spare
}

// The heap is a max-heap under cmpSlots: the worst kept row on top.
func (t *TopN) siftUp(i int) {
	h := t.heap
	for i > 0 {
		p := (i - 1) / 2
		if t.cmpSlots(h[i], h[p]) <= 0 {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *TopN) siftDown(i int) {
	h := t.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && t.cmpSlots(h[r], h[l]) > 0 {
			c = r
		}
		if t.cmpSlots(h[c], h[i]) <= 0 {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// Process is the row path.
func (t *TopN) Process(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if err := t.check(b.Schema()); err != nil {
		return err
	}
	if t.limit == 0 {
		return nil
	}
	for _, r := range b.Rows() {
		s := t.takeSpare()
		if t.nk != nil {
			long, err := t.nk.encodeRow(t.slotKey(s), r)
			if err != nil {
				return err
			}
			t.long = t.long || long
		}
		t.refs[s] = cellRef{rowRef, int32(len(t.rows))}
		t.rows = append(t.rows, r)
		if !t.offer() {
			t.rows = t.rows[:len(t.rows)-1]
		}
	}
	if len(t.rows) > t.compactAt() {
		t.compactRows()
	}
	return nil
}

// compactAt is how many held rows (row form, or in records) trigger a
// compaction: twice what is kept, plus some, so a small top-n does not
// compact on every batch.
func (t *TopN) compactAt() int { return 2*int(min(t.limit, 1<<40)) + 4096 }

// compactRows drops the row-form rows the heap no longer holds.
func (t *TopN) compactRows() {
	live := make([]exec.Row, 0, len(t.heap))
	for _, s := range t.heap {
		if t.refs[s].arr == rowRef {
			live = append(live, t.rows[t.refs[s].row])
			t.refs[s].row = int32(len(live) - 1)
		}
	}
	t.rows = live
}

// ProcessColumnar ranks the batch by its arrays; only the rows that beat
// the current n-th touch the heap.
func (t *TopN) ProcessColumnar(_ context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	if err := t.check(b.Schema()); err != nil {
		return false, err
	}
	if t.nk == nil {
		return false, nil // the row path compares what has no key
	}
	if t.limit == 0 {
		return true, nil
	}
	rec := b.Record()
	n := int(rec.NumRows())
	cols := recordColumns(rec)
	var sel []int32
	if t.full() {
		sel = t.preselect(cols, n, t.sel)
	} else {
		sel = selectAll(t.sel[:0], n)
	}
	t.sel = sel
	if len(sel) == 0 {
		return true, nil
	}
	w := t.w
	if cap(t.scratch) < len(sel)*w {
		t.scratch = make([]byte, len(sel)*w)
	}
	keys := t.scratch[:len(sel)*w]
	long, err := t.nk.encode(keys, w, cols, sel)
	if err != nil {
		return true, err
	}
	t.long = t.long || long
	// The batch is record bi while it is ranked (borrowed), so ties can
	// read its strings.
	bi := int32(len(t.recs))
	t.recs = append(t.recs, rec)
	kept := false
	// Without a long string the whole key is exact; with one, its bytes
	// up to the first string key are, and offer decides the rest.
	exact := w
	if t.long {
		exact = t.nk.exactEnd()
	}
	for j, i := range sel {
		k := keys[j*w : (j+1)*w]
		ref := cellRef{bi, i}
		if t.full() {
			top := t.heap[0]
			tk := t.slotKey(top)
			c := bytes.Compare(k[:exact], tk[:exact])
			if c == 0 && t.long {
				c = compareKeys(t.nk, k, tk, ref, t.refs[top], t.refString, nil)
			}
			if c >= 0 {
				continue // not better than the n-th (a tie: the n-th came first)
			}
		}
		s := t.takeSpare()
		copy(t.slotKey(s), k)
		t.refs[s] = ref
		kept = t.offer() || kept
	}
	if err := t.holdBatch(bi, kept); err != nil {
		return true, err
	}
	return true, nil
}

// holdBatch decides how the rows of batch bi the heap kept are held: not
// at all when it kept none, the record itself when it kept half or more,
// else a copy of just those rows.
func (t *TopN) holdBatch(bi int32, kept bool) error {
	rec := t.recs[bi]
	var rows []int32
	var slots []int32
	if kept {
		for _, s := range t.heap {
			if t.refs[s].arr == bi {
				slots = append(slots, s)
			}
		}
	}
	if len(slots) == 0 {
		t.recs = t.recs[:bi]
		return nil
	}
	if 2*len(slots) >= int(rec.NumRows()) {
		rec.Retain()
		t.recRows += int(rec.NumRows())
	} else {
		slices.SortFunc(slots, func(a, b int32) int { return cmpOrdered(t.refs[a].row, t.refs[b].row) })
		for k, s := range slots {
			rows = append(rows, t.refs[s].row)
			t.refs[s].row = int32(k)
		}
		cp, err := gatherRecord(t.mem, rec.Schema(), recordColumns(rec), rows)
		if err != nil {
			t.recs = t.recs[:bi]
			return fmt.Errorf("top-n: %w", err)
		}
		t.recs[bi] = cp
		t.recRows += len(rows)
	}
	if len(t.recs) > maxHeldRecs || t.recRows > t.compactAt() {
		return t.compactRecords()
	}
	return nil
}

// compactRecords gathers the kept rows held in records into one record.
func (t *TopN) compactRecords() error {
	var slots []int32
	var refs []cellRef
	for _, s := range t.heap {
		if t.refs[s].arr != rowRef {
			slots = append(slots, s)
			refs = append(refs, t.refs[s])
		}
	}
	rec, err := t.gatherRefs(refs)
	if err != nil {
		return err
	}
	t.releaseRecs()
	t.recs, t.recRows = append(t.recs, rec), int(rec.NumRows())
	for k, s := range slots {
		t.refs[s] = cellRef{0, int32(k)}
	}
	return nil
}

// gatherRefs builds one record of the held rows refs name, in order.
func (t *TopN) gatherRefs(refs []cellRef) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, t.schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	arrs := make([]arrow.Array, len(t.recs))
	for c := range cols {
		for r, rec := range t.recs {
			arrs[r] = rec.Column(c)
		}
		a, err := gatherRefs(t.mem, t.schema.Field(c).Type, arrs, refs)
		if err != nil {
			return nil, fmt.Errorf("top-n: %w", err)
		}
		cols[c] = a
	}
	return array.NewRecordBatch(t.schema, cols, int64(len(refs))), nil
}

// OnWatermark holds the watermark until the result has left.
func (t *TopN) OnWatermark(_ context.Context, wm int64, _ exec.Emitter) error {
	t.heldWM = max(t.heldWM, wm)
	return nil
}

// Finish emits the kept rows in order: columnar when any came columnar
// (rows kept in row form are then encoded with them), rows otherwise.
func (t *TopN) Finish(ctx context.Context, _ int, out exec.Emitter) error {
	if t.finished {
		return nil
	}
	t.finished = true
	if err := t.emit(ctx, out); err != nil {
		return err
	}
	if t.heldWM > exec.MinWatermark {
		return out.EmitWatermark(ctx, t.heldWM)
	}
	return nil
}

func (t *TopN) emit(ctx context.Context, out exec.Emitter) error {
	order := slices.Clone(t.heap)
	slices.SortFunc(order, t.cmpSlots)
	if len(t.recs) == 0 {
		rows := make([]exec.Row, len(order))
		for k, s := range order {
			rows[k] = t.rows[t.refs[s].row]
		}
		return emitRowChunks(ctx, out, t.schema, rows)
	}
	if err := t.encodeRowRefs(order); err != nil {
		return err
	}
	refs := make([]cellRef, len(order))
	for k, s := range order {
		refs[k] = t.refs[s]
	}
	rec, err := t.gatherRefs(refs)
	if err != nil {
		return err
	}
	t.releaseRecs()
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	return emitRecordChunks(ctx, out, rec)
}

// encodeRowRefs moves the kept rows held in row form into a record, so
// the output is one columnar result.
func (t *TopN) encodeRowRefs(slots []int32) error {
	var rows []exec.Row
	r := int32(len(t.recs))
	for _, s := range slots {
		if t.refs[s].arr == rowRef {
			rows = append(rows, t.rows[t.refs[s].row])
			t.refs[s] = cellRef{r, int32(len(rows) - 1)}
		}
	}
	if len(rows) == 0 {
		return nil
	}
	rec, err := exec.EncodeRows(t.mem, t.schema, rows)
	if err != nil {
		return fmt.Errorf("top-n: %w", err)
	}
	t.recs = append(t.recs, rec)
	t.rows = nil
	return nil
}

func (t *TopN) releaseRecs() {
	for _, r := range t.recs {
		r.Release()
	}
	t.recs = nil
	t.recRows = 0
}

// Close releases held records.
func (t *TopN) Close() {
	t.releaseRecs()
	t.rows = nil
}
