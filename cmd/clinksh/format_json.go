package main

import (
	"errors"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sqlvalue"
)

var errNoColumns = errors.New("result: batch before Columns")

// jsonSink writes one JSON array of objects per statement (json) or one
// object per line (ndjson). Keys are the column names; values follow
// styleJSON (see valueStyle).
type jsonSink struct {
	opts sinkOptions
	gate outputGate
	nd   bool

	mu     sync.Mutex
	fns    []appendFunc
	keys   [][]byte // `{"name":` for the first column, `,"name":` after
	buf    []byte
	n      int64
	opened bool
}

func (s *jsonSink) Columns(schema *arrow.Schema, bounded bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !bounded && s.opts.unbounded != nil {
		s.opts.unbounded()
	}
	s.fns = columnAppenders(schema, styleJSON)
	s.keys = make([][]byte, schema.NumFields())
	for i, f := range schema.Fields() {
		k := []byte{','}
		if i == 0 {
			k[0] = '{'
		}
		k = appendJSONString(k, f.Name)
		s.keys[i] = append(k, ':')
	}
	s.gate.fn = s.opts.beforeOutput
	if s.nd {
		return nil
	}
	s.gate.open()
	s.opened = true
	if _, err := s.opts.out.WriteString("["); err != nil {
		return err
	}
	return s.opts.out.Flush()
}

func (s *jsonSink) Batch(b *exec.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		return errNoColumns
	}
	s.gate.open()
	err := forEachRecord(s.opts.mem, b, func(rec arrow.RecordBatch) error {
		cols := rec.Columns()
		nrows := int(rec.NumRows())
		buf := s.buf[:0]
		for i := 0; i < nrows; i++ {
			if !s.nd {
				if s.n > 0 || i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, '\n')
			}
			for c, col := range cols {
				buf = append(buf, s.keys[c]...)
				if sqlvalue.IsNull(col, i) {
					buf = append(buf, "null"...)
					continue
				}
				buf = s.fns[c](col, i, buf)
			}
			if len(cols) == 0 {
				buf = append(buf, '{')
			}
			buf = append(buf, '}')
			if s.nd {
				buf = append(buf, '\n')
			}
		}
		s.buf = buf
		s.n += int64(nrows)
		_, err := s.opts.out.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	return s.opts.out.Flush()
}

// finish closes the array even after an error or a cancellation, so what
// reached stdout is still one well-formed JSON document.
func (s *jsonSink) finish(error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opened {
		end := "]\n"
		if s.n > 0 {
			end = "\n]\n"
		}
		if _, err := s.opts.out.WriteString(end); err != nil {
			return err
		}
	}
	return s.opts.out.Flush()
}
