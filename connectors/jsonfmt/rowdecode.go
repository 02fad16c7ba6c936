package jsonfmt

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/exec"
)

// The row decode is the authority: encoding/json turns each record into
// raw fields, and each declared column converts its raw text with the same
// scalar parsers the columnar walk uses. It is more lenient than the walk
// (quoted numbers and booleans, any JSON value into VARCHAR as its text, as
// Flink's JSON format), and the walk refuses everything it does not decide
// identically.

func (d *Decoder) decodeRow(rec []byte) (exec.Row, *RecordError) {
	if !json.Valid(rec) {
		return nil, &RecordError{Reason: ReasonMalformed, Err: fmt.Errorf("malformed JSON: %s", snippet(rec))}
	}
	if t := bytes.TrimLeft(rec, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, &RecordError{Reason: ReasonNotObject, Err: fmt.Errorf("not a JSON object: %s", snippet(rec))}
	}
	return d.rowObject(json.RawMessage(rec), d.fields, d.unread, "")
}

// rowObject converts the object raw to a row of fields, and judges the
// unread fields by the same conversion, dropping their values.
func (d *Decoder) rowObject(raw json.RawMessage, fields, unread []arrow.Field, path string) (exec.Row, *RecordError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &RecordError{Reason: ReasonMalformed, Err: err}
	}
	row := make(exec.Row, len(fields))
	for i, f := range fields {
		val, rerr := d.rowField(m, f, path)
		if rerr != nil {
			return nil, rerr
		}
		row[i] = val
	}
	for _, f := range unread {
		if _, rerr := d.rowField(m, f, path); rerr != nil {
			return nil, rerr
		}
	}
	return row, nil
}

// rowField converts field f of the object m (nil when absent).
func (d *Decoder) rowField(m map[string]json.RawMessage, f arrow.Field, path string) (any, *RecordError) {
	v, ok := m[f.Name]
	name := path + f.Name
	if !ok {
		if d.opts.FailOnMissing {
			return nil, &RecordError{Reason: ReasonMissing, Column: name, Err: fmt.Errorf("field '%s' is missing", name)}
		}
		return nil, nil
	}
	return d.rowValue(v, f.Type, name)
}

func mismatch(name string, raw json.RawMessage, t arrow.DataType, why error) *RecordError {
	msg := fmt.Sprintf("column '%s': %s is not a valid %s", name, snippet(raw), typeName(t))
	if why != nil {
		msg += " (" + why.Error() + ")"
	}
	return &RecordError{Reason: ReasonType, Column: name, Err: fmt.Errorf("%s", msg)}
}

// text returns the content of a JSON string, or the raw token of a scalar.
func text(raw json.RawMessage) ([]byte, bool) {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return []byte(s), true
	}
	return raw, false
}

func (d *Decoder) rowValue(raw json.RawMessage, t arrow.DataType, name string) (any, *RecordError) {
	if string(raw) == "null" {
		return nil, nil
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		s, _ := text(raw)
		switch strings.ToLower(string(s)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, mismatch(name, raw, t, nil)
	case *arrow.Int32Type, *arrow.Int64Type:
		bits := 64
		if t.ID() == arrow.INT32 {
			bits = 32
		}
		s, quoted := text(raw)
		if quoted {
			s = bytes.TrimSpace(s)
		}
		v, err := parseInt(s, bits)
		if err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		if bits == 32 {
			return int32(v), nil
		}
		return v, nil
	case *arrow.Float32Type, *arrow.Float64Type:
		s, _ := text(raw)
		bits := 64
		if t.ID() == arrow.FLOAT32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), bits)
		if err != nil {
			return nil, mismatch(name, raw, t, nil)
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case *arrow.Decimal128Type:
		s, _ := text(raw)
		v, err := parseDecimal(bytes.TrimSpace(s), t.Precision, t.Scale)
		if err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		return v, nil
	case *arrow.StringType:
		if raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, mismatch(name, raw, t, err)
			}
			return s, nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		return buf.String(), nil
	case *arrow.BinaryType:
		s, quoted := text(raw)
		if !quoted {
			return nil, mismatch(name, raw, t, nil)
		}
		v, err := base64.StdEncoding.DecodeString(string(s))
		if err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		return append([]byte(nil), v...), nil // exec.Value's form: empty is a nil slice
	case *arrow.TimestampType:
		s, quoted := text(raw)
		if !quoted {
			return nil, mismatch(name, raw, t, nil)
		}
		v, err := parseTimestamp(s, t.Unit)
		if err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		return v, nil
	case *arrow.Date32Type:
		s, quoted := text(raw)
		if !quoted {
			return nil, mismatch(name, raw, t, nil)
		}
		v, err := parseDate(s)
		if err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		return v, nil
	case *arrow.StructType:
		if raw[0] != '{' {
			return nil, mismatch(name, raw, t, nil)
		}
		return d.rowObject(raw, t.Fields(), nil, name+".")
	case *arrow.ListType:
		if raw[0] != '[' {
			return nil, mismatch(name, raw, t, nil)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, mismatch(name, raw, t, err)
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			v, rerr := d.rowValue(e, t.Elem(), fmt.Sprintf("%s[%d]", name, i))
			if rerr != nil {
				return nil, rerr
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, mismatch(name, raw, t, nil)
}

func typeName(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return "BOOLEAN"
	case *arrow.Int32Type:
		return "INT"
	case *arrow.Int64Type:
		return "BIGINT"
	case *arrow.Float32Type:
		return "FLOAT"
	case *arrow.Float64Type:
		return "DOUBLE"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case *arrow.StringType:
		return "VARCHAR"
	case *arrow.BinaryType:
		return "BYTES (base64)"
	case *arrow.TimestampType:
		return "TIMESTAMP"
	case *arrow.Date32Type:
		return "DATE"
	case *arrow.StructType:
		return "ROW (JSON object)"
	case *arrow.ListType:
		return "ARRAY (JSON array)"
	}
	return t.String()
}

// snippet shortens a record for an error message.
func snippet(b []byte) string {
	const maxLen = 80
	s := strings.TrimSpace(string(b))
	if len(s) > maxLen {
		s = s[:maxLen] + "..."
	}
	return strconv.Quote(s)
}
