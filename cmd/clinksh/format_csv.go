package main

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sqlvalue"
)

// delimSink writes CSV (RFC 4180) or TSV. One header row. NULL is an empty
// field; in CSV an empty string is written as "" so the two stay apart (as
// PostgreSQL's COPY CSV does). TSV escapes tab, newline and carriage return
// in values as \t, \n and \r (backslashes are left as they are).
type delimSink struct {
	opts sinkOptions
	gate outputGate
	sep  byte

	mu      sync.Mutex
	fns     []appendFunc
	buf     []byte
	scratch []byte
}

func (s *delimSink) Columns(schema *arrow.Schema, bounded bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !bounded && s.opts.unbounded != nil {
		s.opts.unbounded()
	}
	s.fns = columnAppenders(schema, styleText)
	s.buf = s.buf[:0]
	for i, f := range schema.Fields() {
		if i > 0 {
			s.buf = append(s.buf, s.sep)
		}
		start := len(s.buf)
		s.buf = append(s.buf, f.Name...)
		s.buf = s.escape(s.buf, start)
	}
	s.buf = append(s.buf, '\n')
	s.gate.fn = s.opts.beforeOutput
	s.gate.open()
	if _, err := s.opts.out.Write(s.buf); err != nil {
		return err
	}
	return s.opts.out.Flush()
}

func (s *delimSink) Batch(b *exec.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		return errNoColumns
	}
	err := forEachRecord(s.opts.mem, b, func(rec arrow.RecordBatch) error {
		cols := rec.Columns()
		nrows := int(rec.NumRows())
		buf := s.buf[:0]
		for i := 0; i < nrows; i++ {
			for c, col := range cols {
				if c > 0 {
					buf = append(buf, s.sep)
				}
				if sqlvalue.IsNull(col, i) {
					continue
				}
				start := len(buf)
				buf = s.fns[c](col, i, buf)
				buf = s.escape(buf, start)
			}
			buf = append(buf, '\n')
		}
		s.buf = buf
		_, err := s.opts.out.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	// Flush per batch: an unbounded result must show up as it arrives.
	return s.opts.out.Flush()
}

// escape quotes (CSV) or escapes (TSV) the field buf[start:] in place.
func (s *delimSink) escape(buf []byte, start int) []byte {
	field := buf[start:]
	if s.sep == '\t' {
		if !hasAny(field, '\t', '\n', '\r', '\r') {
			return buf
		}
		s.scratch = append(s.scratch[:0], field...)
		buf = buf[:start]
		for _, c := range s.scratch {
			switch c {
			case '\t':
				buf = append(buf, '\\', 't')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			default:
				buf = append(buf, c)
			}
		}
		return buf
	}
	if len(field) > 0 && !hasAny(field, ',', '"', '\r', '\n') {
		return buf
	}
	s.scratch = append(s.scratch[:0], field...)
	buf = append(buf[:start], '"')
	for _, c := range s.scratch {
		if c == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, c)
	}
	return append(buf, '"')
}

// hasAny reports whether b holds any of the four bytes (a plain loop: far
// cheaper than bytes.IndexAny on short fields).
func hasAny(b []byte, c1, c2, c3, c4 byte) bool {
	for _, c := range b {
		if c == c1 || c == c2 || c == c3 || c == c4 {
			return true
		}
	}
	return false
}

func (s *delimSink) finish(error) error { return s.opts.out.Flush() }
