package state

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// WriteIPC writes recs (all of schema) to w as one Arrow IPC stream.
func WriteIPC(w io.Writer, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	if schema == nil {
		return errors.New("no schema")
	}
	iw := ipc.NewWriter(w, ipc.WithSchema(schema))
	for i, rec := range recs {
		if !rec.Schema().Equal(schema) {
			iw.Close()
			return fmt.Errorf("batch %d has schema %s, want %s", i, rec.Schema(), schema)
		}
		if err := iw.Write(rec); err != nil {
			iw.Close()
			return err
		}
	}
	return iw.Close()
}

// ReadIPC reads one Arrow IPC stream: its schema and every batch (the
// caller releases them), allocated from mem.
func ReadIPC(r io.Reader, mem memory.Allocator) (*arrow.Schema, []arrow.RecordBatch, error) {
	ir, err := ipc.NewReader(r, ipc.WithAllocator(mem))
	if err != nil {
		return nil, nil, err
	}
	defer ir.Release()
	var recs []arrow.RecordBatch
	for ir.Next() {
		rec := ir.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := ir.Err(); err != nil && !errors.Is(err, io.EOF) {
		for _, rec := range recs {
			rec.Release()
		}
		return nil, nil, err
	}
	return ir.Schema(), recs, nil
}
