package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
)

// dataset is the set of files one run reads. Both engines read the same
// files, so neither gets data the other has not seen.
type dataset struct {
	Bids     string // Parquet, bid columns
	BidsJSON string // NDJSON, the Kafka JSON shape of a bid
	Auctions string // Parquet, auction columns (for the join)
}

func datasetIn(dir string) dataset {
	return dataset{
		Bids:     filepath.Join(dir, "bids.parquet"),
		BidsJSON: filepath.Join(dir, "bids.json"),
		Auctions: filepath.Join(dir, "auctions.parquet"),
	}
}

// prepareData generates the files for bids bid rows under dir unless a
// previous run left them there. Every file is written under a temporary
// name and renamed when complete, so a file that exists is whole.
func prepareData(ctx context.Context, dir string, bids int, log io.Writer) (dataset, error) {
	ds := datasetIn(dir)
	if exists(ds.Bids) && exists(ds.BidsJSON) && exists(ds.Auctions) {
		fmt.Fprintf(log, "reusing data in %s\n", dir)
		return ds, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ds, err
	}
	start := time.Now()
	// Bids are 46 of every 50 events: enough events for the bids asked
	// for; the auctions are those of the same event range.
	events := (int64(bids)/46 + 1) * 50
	if err := writeBids(ctx, ds.Bids, ds.BidsJSON, events, bids); err != nil {
		return ds, fmt.Errorf("generating bids: %w", err)
	}
	if err := writeAuctions(ctx, ds.Auctions, events); err != nil {
		return ds, fmt.Errorf("generating auctions: %w", err)
	}
	fmt.Fprintf(log, "generated %d bids (%d events) in %s in %.1fs\n", bids, events, dir, time.Since(start).Seconds())
	return ds, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// nexmarkSource opens the generator's flat table (bid or auction) over the
// first events events.
func nexmarkSource(table string, events int64) (exec.Source, *arrow.Schema, error) {
	f, ok := connectors.Lookup("nexmark")
	if !ok {
		return nil, nil, errors.New("the nexmark connector is not registered")
	}
	tbl, err := f(map[string]string{"table": table, "events.num": strconv.FormatInt(events, 10)}, nil)
	if err != nil {
		return nil, nil, err
	}
	src, err := tbl.Open(connectors.ScanSpec{})
	if err != nil {
		return nil, nil, err
	}
	return src, tbl.Schema(), nil
}

// parquetProps are what other writers do by default: snappy, dictionary
// on, and ~1M-row row groups (WriteBuffered fills each to the limit).
func parquetProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1<<20), parquet.WithCompression(compress.Codecs.Snappy))
}

// writeBids writes the first n bids of events events to a Parquet file and
// an NDJSON file in one pass over the generator.
func writeBids(ctx context.Context, pqPath, jsonPath string, events int64, n int) error {
	src, schema, err := nexmarkSource("bid", events)
	if err != nil {
		return err
	}
	pq, err := createTemp(pqPath)
	if err != nil {
		return err
	}
	defer pq.abort()
	js, err := createTemp(jsonPath)
	if err != nil {
		return err
	}
	defer js.abort()
	pw, err := pqarrow.NewFileWriter(schema, pq.f, parquetProps(), pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	jw := bufio.NewWriterSize(js.f, 1<<20)
	em := &fileEmitter{left: n, write: func(rec arrow.RecordBatch) error {
		if err := pw.WriteBuffered(rec); err != nil {
			return err
		}
		return writeNDJSON(jw, rec)
	}}
	if err := src.Run(ctx, em); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	if em.left > 0 {
		return fmt.Errorf("the generator produced %d bids, %d short of %d", n-em.left, em.left, n)
	}
	if err := pw.Close(); err != nil { // closes pq.f too
		return err
	}
	pq.closed = true
	if err := jw.Flush(); err != nil {
		return err
	}
	if err := js.commit(); err != nil {
		return err
	}
	return pq.commit()
}

// writeAuctions writes every auction of events events to a Parquet file.
func writeAuctions(ctx context.Context, path string, events int64) error {
	src, schema, err := nexmarkSource("auction", events)
	if err != nil {
		return err
	}
	out, err := createTemp(path)
	if err != nil {
		return err
	}
	defer out.abort()
	pw, err := pqarrow.NewFileWriter(schema, out.f, parquetProps(), pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	em := &fileEmitter{left: -1, write: pw.WriteBuffered}
	if err := src.Run(ctx, em); err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return err
	}
	out.closed = true
	return out.commit()
}

// tempFile is a file written under path+".tmp" and renamed into place.
type tempFile struct {
	f      *os.File
	path   string
	closed bool
	done   bool
}

func createTemp(path string) (*tempFile, error) {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return nil, err
	}
	return &tempFile{f: f, path: path}, nil
}

func (t *tempFile) commit() error {
	if !t.closed {
		if err := t.f.Close(); err != nil {
			return err
		}
		t.closed = true
	}
	if err := os.Rename(t.path+".tmp", t.path); err != nil {
		return err
	}
	t.done = true
	return nil
}

// abort removes the temporary file of a write that did not commit.
func (t *tempFile) abort() {
	if t.done {
		return
	}
	if !t.closed {
		t.f.Close()
	}
	os.Remove(t.path + ".tmp")
}

// fileEmitter hands the generator's batches to write, stopping after left
// rows (left < 0: all of them).
type fileEmitter struct {
	left  int
	write func(arrow.RecordBatch) error
}

func (e *fileEmitter) Emit(ctx context.Context, b *exec.Batch) error {
	if e.left == 0 {
		return exec.ErrStop
	}
	if !b.IsColumnar() {
		return errors.New("the nexmark source emitted a row batch; the writer needs Arrow records")
	}
	rec := b.Record()
	if e.left > 0 && int(rec.NumRows()) > e.left {
		rec = rec.NewSlice(0, int64(e.left))
		defer rec.Release()
	}
	if e.left > 0 {
		e.left -= int(rec.NumRows())
	}
	return e.write(rec)
}

func (e *fileEmitter) EmitWatermark(context.Context, int64) error { return nil }

// jsonTimeLayout is how the Kafka JSON of nexmark spells a TIMESTAMP(3).
const jsonTimeLayout = "2006-01-02 15:04:05.000"

// writeNDJSON writes rec as one JSON object per line, keys in schema order.
// It supports the types of the nexmark flat tables: BIGINT, VARCHAR and
// TIMESTAMP; anything else is an error naming the column.
func writeNDJSON(w *bufio.Writer, rec arrow.RecordBatch) error {
	schema := rec.Schema()
	keys := make([][]byte, rec.NumCols())
	for c, f := range schema.Fields() {
		switch f.Type.(type) {
		case *arrow.Int64Type, *arrow.StringType, *arrow.TimestampType:
		default:
			return fmt.Errorf("json: column %q has type %s, which the writer does not encode", f.Name, f.Type)
		}
		sep := ","
		if c == 0 {
			sep = "{"
		}
		keys[c] = appendJSONString([]byte(sep), f.Name)
		keys[c] = append(keys[c], ':')
	}
	var line []byte
	for i := 0; i < int(rec.NumRows()); i++ {
		line = line[:0]
		for c := range keys {
			line = append(line, keys[c]...)
			col := rec.Column(c)
			if col.IsNull(i) {
				line = append(line, "null"...)
				continue
			}
			switch a := col.(type) {
			case *array.Int64:
				line = strconv.AppendInt(line, a.Value(i), 10)
			case *array.String:
				line = appendJSONString(line, a.Value(i))
			case *array.Timestamp:
				unit := a.DataType().(*arrow.TimestampType).Unit
				t := a.Value(i).ToTime(unit).UTC()
				line = append(line, '"')
				line = t.AppendFormat(line, jsonTimeLayout)
				line = append(line, '"')
			}
		}
		line = append(line, '}', '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// appendJSONString appends s as a JSON string. Valid UTF-8 passes through;
// quotes, backslashes and control characters are escaped, and invalid
// UTF-8 becomes U+FFFD (as encoding/json does).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
