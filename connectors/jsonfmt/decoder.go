// Package jsonfmt is the JSON format shared by the Kafka source and
// newline-delimited JSON files: the decode bridge from JSON records to
// batches of a table's schema (seed 000's json_string_to_row_columnar), and
// the encoder from batches back to JSON for sinks.
//
// The decoder walks each record once, writing straight into the Arrow
// buffers of the schema's columns. A batch is born columnar when every
// record is decoded faithfully; any record the walk cannot decide is handed
// to the row decode (encoding/json), which is the authority: if the row
// decode rejects it too it is a bad record (skipped or failed per
// 'on-error'), otherwise the whole batch falls back to row form. A damper
// stops trying columnar after 8 consecutive fallback batches and probes
// every 64th.
package jsonfmt

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// The decode damper of seed 000: after fallbackThreshold consecutive
// batches that fell back to rows, try columnar only every fallbackProbe-th.
const (
	fallbackThreshold = 8
	fallbackProbe     = 64
)

// decodeDamper is that damper. Its input is whether a columnar try
// succeeded, not an emission's size, so it is not the output damper
// (exec.Damper) fed ones and zeros.
type decodeDamper struct {
	fallbacks int // consecutive tries that fell back
	skipped   int // batches sent to rows since backing off
	backedOff bool
}

// try reports whether the next batch tries the columnar walk: always,
// unless backed off, and then every fallbackProbe-th batch.
func (d *decodeDamper) try() bool {
	if !d.backedOff {
		return true
	}
	d.skipped++
	if d.skipped >= fallbackProbe {
		d.skipped = 0
		return true
	}
	return false
}

// succeeded records a columnar try that held: the damper reopens.
func (d *decodeDamper) succeeded() { *d = decodeDamper{} }

// fellBack records a columnar try that fell back to rows.
func (d *decodeDamper) fellBack() {
	d.fallbacks++
	if d.fallbacks >= fallbackThreshold {
		d.backedOff = true
	}
}

// Reasons a record is bad, the keys of DecodeStats.Skipped.
const (
	ReasonMalformed = "malformed-json"
	ReasonNotObject = "not-an-object"
	ReasonType      = "type-mismatch"
	ReasonMissing   = "missing-field"
	ReasonEmpty     = "empty-record"
)

// RecordError is a bad record. Index is its position in the Decode call,
// Offset its line's byte offset in DecodeLines' data; the caller adds where
// it came from (topic/partition/offset, file/line).
type RecordError struct {
	Index  int
	Offset int
	Reason string
	Column string
	Err    error
}

func (e *RecordError) Error() string { return e.Err.Error() }
func (e *RecordError) Unwrap() error { return e.Err }

// Options are the format's WITH options.
type Options struct {
	// FailOnMissing: 'json.fail-on-missing-field' = 'true'.
	FailOnMissing bool
	// SkipErrors: 'on-error' = 'skip' or 'json.ignore-parse-errors' = 'true'.
	SkipErrors bool
	// RowOnly: 'json.columnar-decode' = 'false' (row decode, row batches).
	RowOnly bool
}

// OptionKeys are the WITH keys ParseOptions reads.
var OptionKeys = []string{"json.fail-on-missing-field", "json.ignore-parse-errors", "on-error", "json.columnar-decode"}

// IsOption reports whether key is one of the format's options.
func IsOption(key string) bool {
	for _, k := range OptionKeys {
		if k == key {
			return true
		}
	}
	return strings.HasPrefix(key, "json.")
}

// ParseOptions reads the format options out of a table's WITH options.
func ParseOptions(options map[string]string) (Options, error) {
	var o Options
	var err error
	if o.FailOnMissing, err = boolOpt(options, "json.fail-on-missing-field", false); err != nil {
		return o, err
	}
	ignore, err := boolOpt(options, "json.ignore-parse-errors", false)
	if err != nil {
		return o, err
	}
	columnar, err := boolOpt(options, "json.columnar-decode", true)
	if err != nil {
		return o, err
	}
	o.RowOnly = !columnar
	switch v := strings.ToLower(strings.TrimSpace(options["on-error"])); v {
	case "", "fail":
		o.SkipErrors = ignore
	case "skip":
		o.SkipErrors = true
	default:
		return o, fmt.Errorf("option 'on-error' = '%s': want 'fail' or 'skip'", options["on-error"])
	}
	if o.FailOnMissing && ignore {
		// Flink refuses the same combination.
		return o, fmt.Errorf("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be 'true'")
	}
	return o, nil
}

func boolOpt(options map[string]string, key string, def bool) (bool, error) {
	v, ok := options[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("option '%s' = '%s': want 'true' or 'false'", key, v)
}

// DecodeStats are a decoder's counters, for EXPLAIN ANALYZE.
type DecodeStats struct {
	Records         int64            // records decoded (kept)
	ColumnarBatches int64            // batches born columnar
	RowBatches      int64            // batches decoded to rows (fallback, damper or opt-out)
	Fallbacks       int64            // columnar attempts abandoned for the row decode
	DamperSkips     int64            // batches the damper sent straight to rows
	DamperBackedOff bool             // the damper is currently holding columnar back
	Skipped         map[string]int64 // bad records skipped, by reason
}

// Add merges o into s (a source sums its partitions' decoders).
func (s *DecodeStats) Add(o DecodeStats) {
	s.Records += o.Records
	s.ColumnarBatches += o.ColumnarBatches
	s.RowBatches += o.RowBatches
	s.Fallbacks += o.Fallbacks
	s.DamperSkips += o.DamperSkips
	s.DamperBackedOff = s.DamperBackedOff || o.DamperBackedOff
	for k, v := range o.Skipped {
		if s.Skipped == nil {
			s.Skipped = map[string]int64{}
		}
		s.Skipped[k] += v
	}
}

// String renders the stats for EXPLAIN ANALYZE.
func (s DecodeStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "json decode: %d records, %d columnar / %d row batches, %d fallbacks, damper %s (%d skipped probes)",
		s.Records, s.ColumnarBatches, s.RowBatches, s.Fallbacks, map[bool]string{true: "backed off", false: "open"}[s.DamperBackedOff], s.DamperSkips)
	if len(s.Skipped) > 0 {
		keys := make([]string, 0, len(s.Skipped))
		for k := range s.Skipped {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(", bad records skipped:")
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%d", k, s.Skipped[k])
		}
	}
	return b.String()
}

// Result is one decoded batch. Exactly one of Rec and Rows is set when N > 0.
type Result struct {
	Rec  arrow.RecordBatch // born columnar; the caller owns it
	Rows []exec.Row        // the row decode
	N    int               // records kept
	// Kept lists the indexes of the kept records when some were skipped;
	// nil means all were kept (the caller aligns per-record metadata).
	Kept []int
}

// Decoder decodes JSON records into batches of a schema. It is not safe for
// concurrent use (one per partition); Stats may be read concurrently.
type Decoder struct {
	mem    memory.Allocator
	schema *arrow.Schema
	fields []arrow.Field
	// unread are the declared fields no column is built for, validated
	// all the same: a record is good or bad by itself, whatever the query
	// reads.
	unread []arrow.Field
	opts   Options
	root   *column
	walk   walker
	damper decodeDamper
	// tabbed is walkTabbed's copy of a document with newlines.
	tabbed []byte
	// lineBytes is the last DecodeLines batch's bytes per record, to size
	// the next one's columns.
	lineBytes int

	records, colBatches, rowBatches, fallbacks, damperSkips atomic.Int64
	backedOff                                               atomic.Bool
	skipMu                                                  sync.Mutex
	skipped                                                 map[string]int64
}

// NewDecoder returns a decoder for schema's columns, matched to JSON fields
// by exact name.
func NewDecoder(mem memory.Allocator, schema *arrow.Schema, opts Options) (*Decoder, error) {
	return newDecoder(mem, schema, nil, opts)
}

// NewProjectedDecoder returns a decoder that builds the columns of
// declared at cols, in that order, and judges every record against all of
// declared: a field no column is built for must still be valid for its
// declared type (and present, under 'json.fail-on-missing-field'), so a
// bad record is bad whatever a query reads.
func NewProjectedDecoder(mem memory.Allocator, declared *arrow.Schema, cols []int, opts Options) (*Decoder, error) {
	fields := declared.Fields()
	read := make([]bool, len(fields))
	built := make([]arrow.Field, 0, len(cols))
	for _, c := range cols {
		if c < 0 || c >= len(fields) {
			return nil, fmt.Errorf("json decode: column %d of %d declared", c, len(fields))
		}
		read[c] = true
		built = append(built, fields[c])
	}
	var unread []arrow.Field
	for i, f := range fields {
		if !read[i] {
			unread = append(unread, f)
		}
	}
	return newDecoder(mem, arrow.NewSchema(built, nil), unread, opts)
}

func newDecoder(mem memory.Allocator, schema *arrow.Schema, unread []arrow.Field, opts Options) (*Decoder, error) {
	root, err := newColumn(arrow.Field{Name: "", Type: arrow.StructOf(schema.Fields()...)})
	if err != nil {
		return nil, err
	}
	if err := root.addChecks(unread, opts.FailOnMissing); err != nil {
		return nil, err
	}
	root.setMem(decodeAllocator(mem))
	return &Decoder{mem: mem, schema: schema, fields: schema.Fields(), unread: unread, opts: opts, root: root,
		walk:    walker{failOnMissing: opts.FailOnMissing},
		skipped: map[string]int64{}}, nil
}

// Schema is the decoded batches' schema.
func (d *Decoder) Schema() *arrow.Schema { return d.schema }

// Stats returns the decoder's counters.
func (d *Decoder) Stats() DecodeStats {
	s := DecodeStats{Records: d.records.Load(), ColumnarBatches: d.colBatches.Load(), RowBatches: d.rowBatches.Load(),
		Fallbacks: d.fallbacks.Load(), DamperSkips: d.damperSkips.Load(), DamperBackedOff: d.backedOff.Load()}
	d.skipMu.Lock()
	for k, v := range d.skipped {
		if s.Skipped == nil {
			s.Skipped = map[string]int64{}
		}
		s.Skipped[k] = v
	}
	d.skipMu.Unlock()
	return s
}

func (d *Decoder) skip(reason string) {
	d.skipMu.Lock()
	d.skipped[reason]++
	d.skipMu.Unlock()
	exec.Global.SkippedRecords.Add(1)
}

// blank reports whether rec is only JSON whitespace (newlines included: a
// Kafka record of one newline is as empty as an empty one).
func blank(rec []byte) bool {
	for _, c := range rec {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// Decode decodes one batch of records (one JSON document each). A bad
// record fails the call with a *RecordError (on-error = fail) or is skipped
// and counted (skip). Blank records (Kafka tombstones) are skipped.
func (d *Decoder) Decode(recs [][]byte) (Result, error) {
	if len(recs) == 0 {
		return Result{}, nil
	}
	if d.tryColumnar() {
		res, ok, err := d.decodeColumnar(recs)
		if err != nil {
			return Result{}, err
		}
		if d.columnarDone(res, ok) {
			return res, nil
		}
	}
	res, err := d.decodeRows(recs)
	if err != nil {
		return Result{}, err
	}
	d.rowsDone(res)
	return res, nil
}

// tryColumnar says whether this batch tries the columnar walk (the option
// and the damper), counting the damper's skips.
func (d *Decoder) tryColumnar() bool {
	if d.opts.RowOnly {
		return false
	}
	if !d.damper.try() {
		d.damperSkips.Add(1)
		return false
	}
	return true
}

// columnarDone records a columnar try's outcome and reports whether res
// is the answer (ok), rather than a fallback to the row decode.
func (d *Decoder) columnarDone(res Result, ok bool) bool {
	if ok {
		d.damper.succeeded()
		d.backedOff.Store(d.damper.backedOff)
		d.colBatches.Add(1)
		d.records.Add(int64(res.N))
		return true
	}
	d.damper.fellBack()
	d.backedOff.Store(d.damper.backedOff)
	d.fallbacks.Add(1)
	exec.Global.DecodeFallbacks.Add(1)
	return false
}

func (d *Decoder) rowsDone(res Result) {
	d.rowBatches.Add(1)
	d.records.Add(int64(res.N))
}

// walkTabbed walks rec, one whole JSON document the walk failed on, again
// when it has newlines: they end an NDJSON record in the walk (skipWS), so
// a document with newlines in its whitespace (a pretty-printed Kafka
// message) is walked from a copy with them as tabs: the same whitespace
// between tokens, and inside a string still a control character, which
// fails the walk as the newline would. It reports whether the walk read an
// object and nothing but whitespace after it.
func (d *Decoder) walkTabbed(rec []byte, n int) bool {
	if bytes.IndexByte(rec, '\n') < 0 {
		return false
	}
	d.root.truncateChildren(n)
	d.tabbed = append(d.tabbed[:0], rec...)
	for i, c := range d.tabbed {
		if c == '\n' {
			d.tabbed[i] = '\t'
		}
	}
	j := skipWS(d.tabbed, 0)
	if j >= len(d.tabbed) || d.tabbed[j] != '{' {
		return false
	}
	j = d.walk.readObject(d.tabbed, j, d.root)
	return j >= 0 && skipWS(d.tabbed, j) == len(d.tabbed)
}

// decodeColumnar runs the walk; ok is false when the batch must fall back.
func (d *Decoder) decodeColumnar(recs [][]byte) (res Result, ok bool, err error) {
	root := d.root
	root.begin(len(recs))
	var kept []int
	var reasons []string // skips are counted only if the batch stays columnar
	n := 0
	for i, rec := range recs {
		j := skipWS(rec, 0)
		if j < len(rec) && rec[j] == '{' {
			if j = d.walk.readObject(rec, j, root); j >= 0 && skipWS(rec, j) == len(rec) {
				n++
				if kept != nil {
					kept = append(kept, i)
				}
				continue
			}
		}
		if blank(rec) {
			kept = keepUntil(kept, i)
			reasons = append(reasons, ReasonEmpty)
			continue
		}
		if d.walkTabbed(rec, n) {
			n++
			if kept != nil {
				kept = append(kept, i)
			}
			continue
		}
		root.truncateChildren(n)
		if _, rerr := d.decodeRow(rec); rerr == nil {
			root.abandon()
			return Result{}, false, nil // valid, but not decidable here: fall back
		} else if !d.opts.SkipErrors {
			root.abandon()
			rerr.Index = i
			return Result{}, false, rerr
		} else {
			kept = keepUntil(kept, i)
			reasons = append(reasons, rerr.Reason)
		}
	}
	return d.finishColumnar(n, reasons, kept), true, nil
}

// finishColumnar counts a columnar batch's skipped records and builds its
// record batch from the columns.
func (d *Decoder) finishColumnar(n int, reasons []string, kept []int) Result {
	for _, r := range reasons {
		d.skip(r)
	}
	root := d.root
	cols := make([]arrow.Array, len(root.children))
	for c, ch := range root.children {
		data := ch.finish()
		cols[c] = array.MakeFromData(data)
		data.Release()
	}
	root.dropBuffers()
	rec := array.NewRecordBatch(d.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return Result{Rec: rec, N: n, Kept: kept}
}

// drop skips record i, starting the kept list on the first skip.
func (d *Decoder) drop(kept []int, i int, reason string) []int {
	d.skip(reason)
	return keepUntil(kept, i)
}

// keepUntil starts the kept list at the first skipped record i: every
// record before it was kept.
func keepUntil(kept []int, i int) []int {
	if kept == nil {
		kept = make([]int, i, i+16)
		for k := range kept {
			kept[k] = k
		}
	}
	return kept
}

// decodeRows is the row decode of a whole batch.
func (d *Decoder) decodeRows(recs [][]byte) (Result, error) {
	rows := make([]exec.Row, 0, len(recs))
	var kept []int
	for i, rec := range recs {
		if blank(rec) {
			kept = d.drop(kept, i, ReasonEmpty)
			continue
		}
		row, rerr := d.decodeRow(rec)
		if rerr != nil {
			if !d.opts.SkipErrors {
				rerr.Index = i
				return Result{}, rerr
			}
			kept = d.drop(kept, i, rerr.Reason)
			continue
		}
		rows = append(rows, row)
		if kept != nil {
			kept = append(kept, i)
		}
	}
	return Result{Rows: rows, N: len(rows), Kept: kept}, nil
}

// Report turns decode statistics into what EXPLAIN ANALYZE shows for a
// source stage (exec.Reporter): fallbacks, the damper and skipped records
// by reason.
func (s DecodeStats) Report() exec.OperatorReport {
	r := exec.OperatorReport{
		DecodeFallbacks: s.Fallbacks,
		Damper: &exec.DamperState{BackedOff: s.DamperBackedOff, Threshold: fallbackThreshold,
			Probe: fallbackProbe},
		Counters: []exec.NamedCount{
			{Name: "batches decoded columnar", Value: s.ColumnarBatches},
			{Name: "batches decoded as rows", Value: s.RowBatches},
			{Name: "batches the damper sent to rows", Value: s.DamperSkips},
		},
	}
	reasons := make([]string, 0, len(s.Skipped))
	for k := range s.Skipped {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		r.SkippedRecords += s.Skipped[k]
		r.Counters = append(r.Counters, exec.NamedCount{Name: "skipped: " + k, Value: s.Skipped[k]})
	}
	return r
}
