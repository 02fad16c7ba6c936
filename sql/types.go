package sql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/sqlvalue"

	"github.com/clink-sql/clink/sql/ast"
)

// typeName reads a type as written (see ast.TypeName for the forms) and
// canonicalises its name: INTEGER is INT, REAL FLOAT, DOUBLE PRECISION
// DOUBLE, NUMERIC and DEC DECIMAL, CHARACTER VARYING VARCHAR, TEXT STRING,
// BYTEA BYTES, BOOL BOOLEAN. With notNull, a trailing NOT NULL belongs to
// the type (inside ROW, ARRAY, MAP and CAST); a column's NOT NULL is the
// column's.
func (p *parser) typeName(notNull bool) *ast.TypeName {
	p.enter()
	defer p.leave()
	t := p.peek()
	lo := t.start
	if t.kind != tWord {
		p.errExpected("a type name")
	}
	p.pos++
	tn := &ast.TypeName{Name: t.upper()}
	maxArgs := 0
	switch tn.Name {
	case "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "STRING", "BYTES", "INTERVAL":
	case "BOOL":
		tn.Name = "BOOLEAN"
	case "INTEGER":
		tn.Name = "INT"
	case "REAL":
		tn.Name = "FLOAT"
	case "FLOAT":
		maxArgs = 1
	case "DOUBLE":
		p.accept("PRECISION")
	case "DECIMAL", "DEC", "NUMERIC":
		tn.Name, maxArgs = "DECIMAL", 2
	case "CHAR", "CHARACTER":
		tn.Name, maxArgs = "CHAR", 1
		if p.accept("VARYING") {
			tn.Name = "VARCHAR"
		}
	case "VARCHAR", "BINARY", "VARBINARY", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ":
		maxArgs = 1
	case "TEXT":
		tn.Name = "STRING"
	case "BYTEA":
		tn.Name = "BYTES"
	case "ROW":
		p.rowType(tn, t)
	case "ARRAY":
		p.angleOpen("ARRAY")
		tn.Elem = p.typeName(true)
		p.angleClose("ARRAY<...>")
	case "MAP":
		p.angleOpen("MAP")
		tn.Key = p.typeName(true)
		p.expectOp(",")
		tn.Value = p.typeName(true)
		p.angleClose("MAP<...>")
	default:
		p.fail(t.start, "unsupported type "+tn.Name)
	}
	if p.atOp("(") && tn.Name != "ROW" {
		if maxArgs == 0 {
			p.fail(p.peek().start, tn.Name+" takes no length or precision")
		}
		tn.Args = p.typeArgs(tn.Name, maxArgs)
	}
	if tn.Name == "TIME" || tn.Name == "TIMESTAMP" {
		p.timeZone(tn)
	}
	tn.Span = p.span(lo)
	for p.at("ARRAY") && !p.peekAt(1).isOp("<") {
		p.pos++
		tn = &ast.TypeName{Span: p.span(lo), Name: "ARRAY", Elem: tn}
	}
	if notNull && p.at("NOT") && p.peekAt(1).is("NULL") {
		p.pos += 2
		tn.NotNull = true
		tn.Span = p.span(lo)
	}
	return tn
}

// timeZone reads WITHOUT TIME ZONE, WITH TIME ZONE or (TIMESTAMP) WITH
// LOCAL TIME ZONE.
func (p *parser) timeZone(tn *ast.TypeName) {
	switch {
	case p.at("WITHOUT") && p.peekAt(1).is("TIME"):
		p.pos++
	case p.at("WITH") && p.peekAt(1).is("LOCAL") && tn.Name == "TIMESTAMP":
		p.pos += 2
		tn.WithLocalTimeZone = true
	case p.at("WITH") && p.peekAt(1).is("TIME"):
		p.pos++
		tn.WithTimeZone = true
	default:
		return
	}
	p.expect("TIME")
	p.expect("ZONE")
}

// typeArgs reads (n) or (p, s).
func (p *parser) typeArgs(name string, max int) []int {
	open := p.pos
	p.pos++
	var out []int
	for {
		t := p.peek()
		if t.kind != tNumber {
			p.errExpected(fmt.Sprintf("an integer in %s(...)", name))
		}
		n, err := strconv.Atoi(t.text)
		if err != nil || n < 0 {
			p.fail(t.start, fmt.Sprintf("invalid %s argument %s: expected an integer", name, t.text))
		}
		p.pos++
		out = append(out, n)
		if len(out) == max {
			p.closeParen(open)
			return out
		}
		if !p.acceptOp(",") {
			break
		}
	}
	p.closeList(open)
	return out
}

func (p *parser) angleOpen(what string) {
	if !p.acceptOp("<") {
		p.errExpected("'<' (" + what + "<...>)")
	}
}

// angleClose consumes the '>' closing a type. The lexer reads '>' alone,
// so ARRAY<ARRAY<INT>> closes twice without a '>>' to split.
func (p *parser) angleClose(what string) {
	if !p.acceptOp(">") {
		p.errExpected("'>' to close " + what)
	}
}

// rowType reads ROW<name type ['comment'], ...> or ROW(name type, ...).
func (p *parser) rowType(tn *ast.TypeName, row *token) {
	if p.atOp("<>") || p.atOp("(") && p.peekAt(1).isOp(")") {
		p.fail(row.start, "ROW needs at least one field")
	}
	angle := p.atOp("<")
	if !angle && !p.atOp("(") {
		p.errExpected("'<' or '('")
	}
	open := p.pos
	p.pos++
	seen := map[string]bool{}
	for {
		flo := p.peek().start
		if angle && p.atOp(">") {
			p.fail(row.start, "ROW needs at least one field")
		}
		f := &ast.RowField{Name: p.ident("a field name")}
		if seen[f.Name.Name] {
			p.fail(flo, fmt.Sprintf("duplicate ROW field %q", f.Name.Name))
		}
		seen[f.Name.Name] = true
		f.Type = p.typeName(true)
		if t := p.peek(); t.kind == tString {
			p.pos++
			f.Comment = t.text
		}
		f.Span = p.span(flo)
		tn.Fields = append(tn.Fields, f)
		if !p.acceptOp(",") {
			break
		}
	}
	if angle {
		p.angleClose("ROW<...>")
	} else {
		p.closeList(open)
	}
}

// ParseType reads a type name (case-insensitive) and returns its Arrow
// type (TypeOf).
func ParseType(text string) (arrow.DataType, error) {
	tn, err := run(text, func(p *parser) *ast.TypeName {
		if p.peek().kind == tEOF {
			panic(bailout{&Error{Msg: "empty type name"}})
		}
		tn := p.typeName(false)
		if p.peek().kind != tEOF {
			p.errExpected("end of type")
		}
		return tn
	})
	if err != nil {
		return nil, err
	}
	dt, err := TypeOf(tn)
	var e *Error
	if errors.As(err, &e) {
		return nil, ErrorAt(text, e.Offset, e.Msg)
	}
	return dt, err
}

// ltzZone marks a TIMESTAMP_LTZ: an instant, shown in the session zone.
const ltzZone = "UTC"

// TypeOf maps a type to the Arrow type clink uses for it:
//
//	BOOLEAN                           Boolean
//	TINYINT, SMALLINT, INT            Int32 (one integer width below BIGINT keeps the kernels few)
//	BIGINT                            Int64
//	FLOAT                             Float32; FLOAT(p) with p > 24 Float64
//	DOUBLE                            Float64
//	DECIMAL[(p[, s])]                 Decimal128(p, s), default (10, 0)
//	CHAR, VARCHAR, STRING             String (the length is not enforced)
//	BINARY, VARBINARY, BYTES          Binary
//	DATE                              Date32
//	TIME[(p)]                         Time32(s) for p = 0, Time32(ms) for p <= 3, Time64(us) for p <= 6
//	                                  (and without p, as TIMESTAMP's default), Time64(ns) for p <= 9
//	TIMESTAMP[(p)]                    Timestamp: s for p = 0, ms for p <= 3, us for p <= 6 (default), ns for p <= 9
//	TIMESTAMP_LTZ[(p)], TIMESTAMP[(p)] WITH LOCAL TIME ZONE   the same with time zone UTC
//	INTERVAL                          MonthDayNanoInterval
//	ROW<name T, ...>                  Struct (fields nullable unless NOT NULL)
//	ARRAY<T>                          List (elements nullable unless NOT NULL)
//	MAP<K, V>                         Map
//
// An error is an *Error with the type's Offset (ErrorAt places it).
func TypeOf(t *ast.TypeName) (arrow.DataType, error) {
	bad := func(n *ast.TypeName, format string, args ...any) (arrow.DataType, error) {
		return nil, &Error{Msg: fmt.Sprintf(format, args...), Offset: n.Pos()}
	}
	arg := func(i, def int) int {
		if i < len(t.Args) {
			return t.Args[i]
		}
		return def
	}
	switch t.Name {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean, nil
	case "TINYINT", "SMALLINT", "INT":
		return arrow.PrimitiveTypes.Int32, nil
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64, nil
	case "FLOAT":
		if arg(0, 24) > 24 {
			return arrow.PrimitiveTypes.Float64, nil
		}
		return arrow.PrimitiveTypes.Float32, nil
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64, nil
	case "DECIMAL":
		prec, scale := arg(0, 10), arg(1, 0)
		if prec < 1 || prec > 38 {
			return bad(t, "DECIMAL precision %d is out of range 1..38", prec)
		}
		if scale > prec {
			return bad(t, "DECIMAL scale %d exceeds precision %d", scale, prec)
		}
		return &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}, nil
	case "CHAR", "VARCHAR", "STRING":
		return arrow.BinaryTypes.String, nil
	case "BINARY", "VARBINARY", "BYTES":
		return arrow.BinaryTypes.Binary, nil
	case "DATE":
		return arrow.FixedWidthTypes.Date32, nil
	case "TIME":
		if t.WithTimeZone {
			return bad(t, "TIME WITH TIME ZONE is not supported")
		}
		switch prec := arg(0, 6); {
		case prec > 9:
			return bad(t, "TIME precision %d is out of range 0..9", prec)
		case prec == 0:
			return arrow.FixedWidthTypes.Time32s, nil
		case prec <= 3:
			return arrow.FixedWidthTypes.Time32ms, nil
		case prec <= 6:
			return arrow.FixedWidthTypes.Time64us, nil
		}
		return arrow.FixedWidthTypes.Time64ns, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		if t.WithTimeZone {
			return bad(t, "TIMESTAMP WITH TIME ZONE is not supported; use TIMESTAMP_LTZ")
		}
		prec := arg(0, 6)
		if prec > 9 {
			return bad(t, "TIMESTAMP precision %d is out of range 0..9", prec)
		}
		zone := ""
		if t.Name == "TIMESTAMP_LTZ" || t.WithLocalTimeZone {
			zone = ltzZone
		}
		unit := arrow.Nanosecond
		switch {
		case prec == 0:
			unit = arrow.Second
		case prec <= 3:
			unit = arrow.Millisecond
		case prec <= 6:
			unit = arrow.Microsecond
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: zone}, nil
	case "INTERVAL":
		return arrow.FixedWidthTypes.MonthDayNanoInterval, nil
	case "ROW":
		if len(t.Fields) == 0 {
			return bad(t, "ROW needs at least one field")
		}
		fields := make([]arrow.Field, len(t.Fields))
		seen := map[string]bool{}
		for i, f := range t.Fields {
			if seen[f.Name.Name] {
				return bad(f.Type, "duplicate ROW field %q", f.Name.Name)
			}
			seen[f.Name.Name] = true
			ft, err := TypeOf(f.Type)
			if err != nil {
				return nil, err
			}
			fields[i] = arrow.Field{Name: f.Name.Name, Type: ft, Nullable: !f.Type.NotNull}
		}
		return arrow.StructOf(fields...), nil
	case "ARRAY":
		if t.Elem == nil {
			return bad(t, "ARRAY needs an element type")
		}
		elem, err := TypeOf(t.Elem)
		if err != nil {
			return nil, err
		}
		if t.Elem.NotNull {
			return arrow.ListOfNonNullable(elem), nil
		}
		return arrow.ListOf(elem), nil
	case "MAP":
		if t.Key == nil || t.Value == nil {
			return bad(t, "MAP needs a key and a value type")
		}
		key, err := TypeOf(t.Key)
		if err != nil {
			return nil, err
		}
		val, err := TypeOf(t.Value)
		if err != nil {
			return nil, err
		}
		return arrow.MapOf(key, val), nil
	}
	return bad(t, "unsupported type %s", t.Name)
}

// quoteIdent renders s as a backticked identifier, as Flink prints field
// names.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// TypeString renders an Arrow type in SQL terms (BIGINT, DECIMAL(10, 2),
// TIMESTAMP(3), ROW<`a` BIGINT, ...>, VARCHAR), the spelling DESCRIBE shows
// and ParseType reads back. Types SQL has no name for (e.g. unsigned
// integers from a Parquet file) render as Arrow names in upper case.
func TypeString(t arrow.DataType) string { return sqlvalue.TypeName(t) }

func unitPrecision(u arrow.TimeUnit) int {
	switch u {
	case arrow.Second:
		return 0
	case arrow.Millisecond:
		return 3
	case arrow.Microsecond:
		return 6
	}
	return 9
}
