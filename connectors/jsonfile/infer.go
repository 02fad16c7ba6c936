package jsonfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// inferRecords is how many records schema inference reads.
const inferRecords = 1000

// kind is an inferred JSON type; the zero value is "only null seen".
type kind int

const (
	kNull kind = iota
	kBool
	kInt
	kFloat
	kTimestamp
	kString
	kObject
	kArray
)

// shape is what inference learned about one value position.
type shape struct {
	kind   kind
	fields []string // object keys in order of first appearance
	byName map[string]*shape
	elem   *shape // array elements
}

func newShape() *shape { return &shape{byName: map[string]*shape{}} }

// inferSchema reads up to n records of path and infers its columns: the top
// level keys in order of first appearance; true/false -> BOOLEAN, integers
// -> BIGINT, other numbers -> DOUBLE, strings that all read as timestamps
// ('YYYY-MM-DD HH:MM:SS[.fff]' or ISO-8601) -> TIMESTAMP(3), other strings
// -> VARCHAR, objects -> ROW, arrays -> ARRAY; a key only ever null ->
// VARCHAR. Disagreeing records widen BIGINT to DOUBLE, anything else to
// VARCHAR (which then holds the value's JSON text). Lines that are not a
// JSON object are skipped.
func inferSchema(path string, n int) (*arrow.Schema, error) {
	return inferSchemaUpTo(path, n, maxInferLine)
}

// maxInferLine is the longest line schema inference reads: it holds one
// line in memory at a time.
const maxInferLine = 256 << 20

func inferSchemaUpTo(path string, n, maxLine int) (*arrow.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	root := newShape()
	root.kind = kObject
	r := bufio.NewReaderSize(f, 64<<10)
	var w walker
	var buf []byte
	line, seen := 0, 0
	for seen < n {
		var err error
		buf, err = readLine(r, buf[:0], maxLine)
		if errors.Is(err, errLineTooLong) {
			return nil, fmt.Errorf("%s: line %d is longer than %d MiB, the most schema inference reads; declare the columns in CREATE TABLE",
				path, line+1, maxLine>>20)
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(buf) == 0 && err == io.EOF {
			break
		}
		line++
		text := bytes.TrimSpace(buf)
		if len(text) > 0 && w.valid(text) {
			w.merge(root)
			seen++
		}
		if err == io.EOF {
			break
		}
	}
	if seen == 0 {
		return nil, fmt.Errorf("%s: no JSON object in the first %d lines to infer columns from; declare them in CREATE TABLE", path, line)
	}
	fs := make([]arrow.Field, len(root.fields))
	for i, name := range root.fields {
		fs[i] = arrow.Field{Name: name, Type: root.byName[name].arrowType(), Nullable: true}
	}
	return arrow.NewSchema(fs, nil), nil
}

var errLineTooLong = errors.New("line too long")

// readLine appends the next line of r (without its newline) to buf, in
// time linear in its length; it fails with errLineTooLong past max bytes,
// and returns io.EOF with the last line if that has no newline.
func readLine(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	for {
		piece, err := r.ReadSlice('\n')
		if len(buf)+len(piece) > max+1 || (len(buf)+len(piece) > max && err != nil) {
			return buf, errLineTooLong
		}
		buf = append(buf, piece...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, err
		}
	}
}

// merge merges the record w.valid accepted into root.
//
// It reproduces the encoding/json inference this replaced, which decoded a
// record into a map, merged that if every key it reached was known, and
// otherwise walked the record's tokens. The two differ only when an object
// repeats a key: the map keeps only the last value, so a record of known
// keys such as {"a":"x","a":1} merged just the 1. For such a record merge
// does the same (mergeKnown); every other record merges every value in order
// (mergeObject). A mergeKnown that stops at a new key leaves its partial
// merge behind, as the map walk did; the whole walk after it makes that
// harmless, since widening is order-free and a subtree skipped because it
// became VARCHAR stays VARCHAR whatever keys it holds.
func (w *walker) merge(root *shape) {
	if w.dup {
		w.pos = 0
		if w.mergeKnown(root) {
			return
		}
	}
	w.pos = 0
	w.mergeObject(root)
}

// mergeObject merges the members of the object at w.pos into s, adding new
// keys in order.
func (w *walker) mergeObject(s *shape) {
	w.pos++ // '{'
	for {
		w.ws()
		switch w.b[w.pos] {
		case '}':
			w.pos++
			return
		case ',':
			w.pos++
			w.ws()
		}
		start := w.pos
		child := s.child(w.key(start, w.skipString()))
		w.ws()
		w.pos++ // ':'
		w.ws()
		w.mergeValue(child, false)
	}
}

// child is the shape of key name, added if new; looking up a known key
// allocates nothing.
func (s *shape) child(name []byte) *shape {
	if c, ok := s.byName[string(name)]; ok {
		return c
	}
	c := newShape()
	s.byName[string(name)] = c
	s.fields = append(s.fields, string(name))
	return c
}

// mergeValue merges the value at w.pos into s, widening its kind. known
// merges nested objects as mergeKnown does, and then false reports that it
// stopped at a key not seen before; otherwise it is always true.
func (w *walker) mergeValue(s *shape, known bool) bool {
	switch w.b[w.pos] {
	case '{':
		if s.widen(kObject); s.kind != kObject {
			w.skipValue()
			return true
		}
		if known {
			return w.mergeKnown(s)
		}
		w.mergeObject(s)
	case '[':
		if s.widen(kArray); s.kind != kArray {
			w.skipValue()
			return true
		}
		if s.elem == nil {
			s.elem = newShape()
		}
		w.pos++
		for {
			w.ws()
			switch w.b[w.pos] {
			case ']':
				w.pos++
				return true
			case ',':
				w.pos++
				w.ws()
			}
			if !w.mergeValue(s.elem, known) {
				return false
			}
		}
	default:
		w.mergeScalar(s)
	}
	return true
}

// mergeScalar merges the string, number, true, false or null at w.pos.
func (w *walker) mergeScalar(s *shape) {
	switch w.b[w.pos] {
	case 'n':
		w.pos += len("null")
	case 't':
		w.pos += len("true")
		s.widen(kBool)
	case 'f':
		w.pos += len("false")
		s.widen(kBool)
	case '"':
		start := w.pos
		plain := w.skipString()
		if s.kind == kString {
			return // stays VARCHAR: no need to read it as a timestamp
		}
		var ts bool
		if plain {
			ts = isTimestampBytes(w.b[start+1 : w.pos-1])
		} else {
			ts = isTimestamp(decodeString(w.b[start:w.pos]))
		}
		if ts {
			s.widen(kTimestamp)
		} else {
			s.widen(kString)
		}
	default:
		if w.number() {
			s.widen(kInt)
		} else {
			s.widen(kFloat)
		}
	}
}

// mergeKnown merges the object at w.pos into s as the map walk did: only the
// last value of a repeated key, and reporting false, stopping, at a key s
// (or a nested object's shape) has not seen.
func (w *walker) mergeKnown(s *shape) bool {
	type member struct {
		name string
		at   int // where its value starts
	}
	var members []member
	last := map[string]int{}
	w.pos++ // '{'
	for {
		w.ws()
		c := w.b[w.pos]
		if c == '}' {
			w.pos++
			break
		}
		if c == ',' {
			w.pos++
			w.ws()
		}
		start := w.pos
		m := member{name: string(w.key(start, w.skipString()))}
		w.ws()
		w.pos++ // ':'
		w.ws()
		m.at = w.pos
		last[m.name] = len(members)
		members = append(members, m)
		w.skipValue()
	}
	end := w.pos
	for i, m := range members {
		if last[m.name] != i {
			continue
		}
		child, ok := s.byName[m.name]
		if !ok {
			return false
		}
		w.pos = m.at
		if !w.mergeValue(child, true) {
			return false
		}
	}
	w.pos = end
	return true
}

func (s *shape) widen(k kind) {
	switch {
	case s.kind == kNull || s.kind == k:
		s.kind = k
	case (s.kind == kInt && k == kFloat) || (s.kind == kFloat && k == kInt):
		s.kind = kFloat
	default:
		s.kind = kString
	}
}

func (s *shape) arrowType() arrow.DataType {
	switch s.kind {
	case kBool:
		return arrow.FixedWidthTypes.Boolean
	case kInt:
		return arrow.PrimitiveTypes.Int64
	case kFloat:
		return arrow.PrimitiveTypes.Float64
	case kTimestamp:
		return &arrow.TimestampType{Unit: arrow.Millisecond}
	case kObject:
		fs := make([]arrow.Field, len(s.fields))
		for i, name := range s.fields {
			fs[i] = arrow.Field{Name: name, Type: s.byName[name].arrowType(), Nullable: true}
		}
		return arrow.StructOf(fs...)
	case kArray:
		if s.elem == nil {
			return arrow.ListOf(arrow.BinaryTypes.String)
		}
		return arrow.ListOf(s.elem.arrowType())
	}
	return arrow.BinaryTypes.String
}

var timestampLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z07:00",
}

// isTimestampBytes is isTimestamp for a string's bytes; it converts only
// strings that could be one.
func isTimestampBytes(b []byte) bool {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' {
		return false
	}
	return isTimestamp(string(b))
}

func isTimestamp(s string) bool {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for _, l := range timestampLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}
