package jsonfile

import (
	"bufio"
	"bytes"
	"encoding/json"
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
// VARCHAR (which then holds the value's JSON text).
func inferSchema(path string, n int) (*arrow.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	root := newShape()
	root.kind = kObject
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line, seen := 0, 0
	for seen < n && sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		// Decoding a record into a map is several times faster than
		// walking its tokens (inference ran for 15 ms of every query on a
		// file), but a map forgets the order of its keys, which orders
		// the columns: a record with a key not seen before is read again
		// token by token. Merging a record twice changes nothing.
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			continue // the decoder reports bad records when scanning
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue // not an object
		}
		if !mergeKnown(obj, root) {
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			if _, err := dec.Token(); err != nil {
				continue
			}
			if err := mergeObject(dec, root); err != nil {
				continue
			}
		}
		seen++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
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

// mergeObject reads an object's members (after its '{') into s.
func mergeObject(dec *json.Decoder, s *shape) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, ok := tok.(string)
		if !ok {
			return fmt.Errorf("object key is not a string")
		}
		child, ok := s.byName[name]
		if !ok {
			child = newShape()
			s.byName[name] = child
			s.fields = append(s.fields, name)
		}
		if err := mergeValue(dec, child); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// mergeValue reads one value into s, widening its kind.
func mergeValue(dec *json.Decoder, s *shape) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case nil:
		return nil
	case bool:
		s.widen(kBool)
	case json.Number:
		if _, err := v.Int64(); err == nil {
			s.widen(kInt)
		} else {
			s.widen(kFloat)
		}
	case string:
		if isTimestamp(v) {
			s.widen(kTimestamp)
		} else {
			s.widen(kString)
		}
	case json.Delim:
		switch v {
		case '{':
			s.widen(kObject)
			if s.kind != kObject {
				return skipRest(dec, 1)
			}
			return mergeObject(dec, s)
		case '[':
			s.widen(kArray)
			if s.kind != kArray {
				return skipRest(dec, 1)
			}
			if s.elem == nil {
				s.elem = newShape()
			}
			for dec.More() {
				if err := mergeValue(dec, s.elem); err != nil {
					return err
				}
			}
			_, err := dec.Token() // ']'
			return err
		}
	}
	return nil
}

// mergeKnown merges a decoded object into s, as mergeObject does, and
// reports false, stopping, at a key s (or a nested object's shape) has not
// seen: only the token walk knows where the new key goes in the order.
func mergeKnown(obj map[string]any, s *shape) bool {
	for name, v := range obj {
		child, ok := s.byName[name]
		if !ok || !mergeDecoded(v, child) {
			return false
		}
	}
	return true
}

// mergeDecoded is mergeValue for a decoded value.
func mergeDecoded(v any, s *shape) bool {
	switch x := v.(type) {
	case nil:
	case bool:
		s.widen(kBool)
	case json.Number:
		if _, err := x.Int64(); err == nil {
			s.widen(kInt)
		} else {
			s.widen(kFloat)
		}
	case string:
		if isTimestamp(x) {
			s.widen(kTimestamp)
		} else {
			s.widen(kString)
		}
	case map[string]any:
		s.widen(kObject)
		if s.kind == kObject {
			return mergeKnown(x, s)
		}
	case []any:
		s.widen(kArray)
		if s.kind != kArray {
			return true
		}
		if s.elem == nil {
			s.elem = newShape()
		}
		for _, e := range x {
			if !mergeDecoded(e, s.elem) {
				return false
			}
		}
	}
	return true
}

// skipRest consumes the rest of a container whose opening token was read.
func skipRest(dec *json.Decoder, depth int) error {
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	}
	return nil
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
