package sql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/clink-sql/clink/sqlvalue"
)

// ParseType reads a Flink SQL type name (case-insensitive) and returns the
// Arrow type clink uses for it:
//
//	BOOLEAN                           Boolean
//	TINYINT, SMALLINT, INT, INTEGER   Int32 (one integer width below BIGINT keeps the kernels few)
//	BIGINT                            Int64
//	FLOAT, REAL                       Float32
//	DOUBLE [PRECISION]                Float64
//	DECIMAL|NUMERIC[(p[, s])]         Decimal128(p, s), default (10, 0)
//	VARCHAR[(n)], CHAR[(n)], STRING   String (the length is not enforced)
//	BYTES, VARBINARY[(n)], BINARY[(n)] Binary
//	TIMESTAMP[(p)]                    Timestamp: ms for p<=3, us for p<=6, ns for p<=9; default 6
//	TIMESTAMP_LTZ[(p)], TIMESTAMP[(p)] WITH LOCAL TIME ZONE   the same with time zone UTC
//	DATE                              Date32
//	ROW<name T, ...>, ROW(name T, ...) Struct (fields nullable unless NOT NULL)
//	ARRAY<T>                          List
//	MAP<K, V>                         Map
func ParseType(text string) (arrow.DataType, error) {
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	if p.atEnd() {
		return nil, &Error{Msg: "empty type name"}
	}
	t, err := p.parseType()
	if err != nil {
		return nil, err
	}
	if p.pendingGT {
		return nil, p.errAt(p.toks[p.pos-1].start+1, "unexpected '>' after type")
	}
	if err := p.expectEnd("type"); err != nil {
		return nil, err
	}
	return t, nil
}

// ltzZone marks a TIMESTAMP_LTZ: an instant, shown in the session zone.
const ltzZone = "UTC"

func (p *parser) parseType() (arrow.DataType, error) {
	t := p.peek()
	if t.kind != tkWord {
		return nil, p.errExpected("a type name", "")
	}
	p.pos++
	switch strings.ToUpper(t.text) {
	case "BOOLEAN", "BOOL":
		return arrow.FixedWidthTypes.Boolean, nil
	case "TINYINT", "SMALLINT", "INT", "INTEGER":
		return arrow.PrimitiveTypes.Int32, nil
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64, nil
	case "FLOAT", "REAL":
		return arrow.PrimitiveTypes.Float32, nil
	case "DOUBLE":
		p.accept("PRECISION")
		return arrow.PrimitiveTypes.Float64, nil
	case "DECIMAL", "DEC", "NUMERIC":
		args, err := p.typeArgs(t, 2)
		if err != nil {
			return nil, err
		}
		prec, scale := 10, 0
		if len(args) > 0 {
			prec = args[0]
		}
		if len(args) > 1 {
			scale = args[1]
		}
		if prec < 1 || prec > 38 {
			return nil, p.errAt(t.start, fmt.Sprintf("DECIMAL precision %d is out of range 1..38", prec))
		}
		if scale > prec {
			return nil, p.errAt(t.start, fmt.Sprintf("DECIMAL scale %d exceeds precision %d", scale, prec))
		}
		return &arrow.Decimal128Type{Precision: int32(prec), Scale: int32(scale)}, nil
	case "VARCHAR", "CHAR", "CHARACTER", "STRING":
		p.accept("VARYING")
		if _, err := p.typeArgs(t, 1); err != nil {
			return nil, err
		}
		return arrow.BinaryTypes.String, nil
	case "BYTES", "VARBINARY", "BINARY":
		if _, err := p.typeArgs(t, 1); err != nil {
			return nil, err
		}
		return arrow.BinaryTypes.Binary, nil
	case "DATE":
		return arrow.FixedWidthTypes.Date32, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ":
		args, err := p.typeArgs(t, 1)
		if err != nil {
			return nil, err
		}
		prec := 6
		if len(args) == 1 {
			prec = args[0]
		}
		if prec > 9 {
			return nil, p.errAt(t.start, fmt.Sprintf("TIMESTAMP precision %d is out of range 0..9", prec))
		}
		zone := ""
		if strings.EqualFold(t.text, "TIMESTAMP_LTZ") {
			zone = ltzZone
		}
		switch {
		case p.peek().is("WITHOUT"):
			p.pos++
			if err := p.expectWords("TIME", "ZONE"); err != nil {
				return nil, err
			}
		case p.peek().is("WITH"):
			w := p.next()
			if p.accept("LOCAL") {
				zone = ltzZone
			} else {
				return nil, p.errAt(w.start, "TIMESTAMP WITH TIME ZONE is not supported; use TIMESTAMP_LTZ")
			}
			if err := p.expectWords("TIME", "ZONE"); err != nil {
				return nil, err
			}
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
	case "ROW":
		return p.rowType(t)
	case "ARRAY":
		if err := p.expectOp("<", "after ARRAY"); err != nil {
			return nil, err
		}
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		notNull := p.nullability()
		if err := p.closeAngle("ARRAY<...>"); err != nil {
			return nil, err
		}
		if notNull {
			return arrow.ListOfNonNullable(elem), nil
		}
		return arrow.ListOf(elem), nil
	case "MAP":
		if err := p.expectOp("<", "after MAP"); err != nil {
			return nil, err
		}
		key, err := p.parseType()
		if err != nil {
			return nil, err
		}
		p.nullability()
		if err := p.expectOp(",", "between MAP key and value types"); err != nil {
			return nil, err
		}
		val, err := p.parseType()
		if err != nil {
			return nil, err
		}
		p.nullability()
		if err := p.closeAngle("MAP<...>"); err != nil {
			return nil, err
		}
		return arrow.MapOf(key, val), nil
	}
	return nil, p.errAt(t.start, fmt.Sprintf("unsupported type %s", strings.ToUpper(t.text)))
}

func (p *parser) expectWords(words ...string) error {
	for _, w := range words {
		if err := p.expect(w, "in type"); err != nil {
			return err
		}
	}
	return nil
}

// nullability consumes an optional NOT NULL / NULL and reports NOT NULL.
func (p *parser) nullability() bool {
	if p.peek().is("NOT") && p.peekAt(1).is("NULL") {
		p.pos += 2
		return true
	}
	p.accept("NULL")
	return false
}

// typeArgs reads an optional "(n[, m])" of at most max integers.
func (p *parser) typeArgs(name token, max int) ([]int, error) {
	if !p.peek().isOp("(") {
		return nil, nil
	}
	p.pos++
	var out []int
	for {
		t := p.next()
		if t.kind != tkNumber {
			return nil, p.errAt(t.start, fmt.Sprintf("expected an integer in %s(...), found %s", strings.ToUpper(name.text), describe(t)))
		}
		n, err := strconv.Atoi(t.text)
		if err != nil || n < 0 {
			return nil, p.errAt(t.start, fmt.Sprintf("invalid %s argument %s", strings.ToUpper(name.text), t.text))
		}
		out = append(out, n)
		if p.acceptOp(")") {
			break
		}
		if len(out) >= max {
			return nil, p.errExpected("')'", "in "+strings.ToUpper(name.text)+"(...)")
		}
		if err := p.expectOp(",", "in "+strings.ToUpper(name.text)+"(...)"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rowType reads ROW<name T, ...> or ROW(name T, ...) after ROW.
func (p *parser) rowType(row token) (arrow.DataType, error) {
	if p.peek().isOp("<>") { // the scanner's "not equal"
		return nil, p.errAt(row.start, "ROW needs at least one field")
	}
	angle := p.peek().isOp("<")
	if !angle && !p.peek().isOp("(") {
		return nil, p.errExpected("'<' or '('", "after ROW")
	}
	p.pos++
	closed := func() bool {
		if angle {
			return p.pendingGT || p.peek().isOp(">") || p.peek().isOp(">>")
		}
		return p.peek().isOp(")")
	}
	var fields []arrow.Field
	seen := map[string]bool{}
	for !closed() {
		nt := p.peek()
		name, err := p.ident("of a ROW field")
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, p.errAt(nt.start, fmt.Sprintf("duplicate ROW field %q", name))
		}
		seen[name] = true
		ft, err := p.parseType()
		if err != nil {
			return nil, err
		}
		notNull := p.nullability()
		if p.peek().kind == tkString { // a field description
			p.pos++
		}
		fields = append(fields, arrow.Field{Name: name, Type: ft, Nullable: !notNull})
		if !p.acceptOp(",") {
			break
		}
	}
	if angle {
		if err := p.closeAngle("ROW<...>"); err != nil {
			return nil, err
		}
	} else if err := p.expectOp(")", "to close ROW(...)"); err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, p.errAt(row.start, "ROW needs at least one field")
	}
	return arrow.StructOf(fields...), nil
}

// closeAngle consumes one '>' of a nested type. The scanner reads ">>" as
// one operator (a shift), so the second half of it is remembered in
// pendingGT for the enclosing type.
func (p *parser) closeAngle(what string) error {
	switch {
	case p.pendingGT:
		p.pendingGT = false
	case p.peek().isOp(">"):
		p.pos++
	case p.peek().isOp(">>"):
		p.pos++
		p.pendingGT = true
	default:
		return p.errExpected("'>'", "to close "+what)
	}
	return nil
}

// TypeString renders an Arrow type in SQL terms (BIGINT, DECIMAL(10, 2),
// TIMESTAMP(3), ROW<`a` BIGINT, ...>, VARCHAR), the spelling DESCRIBE shows
// and ParseType reads back. Types SQL has no name for (e.g. unsigned
// integers from a Parquet file) render as Arrow names in upper case. The
// spelling is package sqlvalue's, shared with the executor's messages.
func TypeString(t arrow.DataType) string { return sqlvalue.TypeName(t) }
