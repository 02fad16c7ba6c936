package expr

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Like is e [NOT] LIKE pattern: % matches any run of characters, _ exactly
// one character (not byte), and a backslash makes the next character
// literal (\%, \_, \\); a pattern ending in a lone backslash is an error.
// A constant pattern is compiled once, and the shapes 'abc', 'abc%',
// '%abc' and '%abc%' become equality, prefix, suffix and substring tests.
type Like struct {
	e, pattern Expr
	negate     bool
	m          *likeMatcher // compiled constant pattern, or nil
}

// NewLike is e LIKE pattern, or NOT LIKE when negate.
func NewLike(e, pattern Expr, negate bool) (Expr, error) {
	for _, x := range []Expr{e, pattern} {
		if !isString(x.Type()) && !isNull(x.Type()) {
			return nil, fmt.Errorf("cannot apply LIKE to %s and %s", typeName(e.Type()), typeName(pattern.Type()))
		}
	}
	s := arrow.BinaryTypes.String
	e, _ = Coerce(e, s)
	pattern, _ = Coerce(pattern, s)
	l := &Like{e: e, pattern: pattern, negate: negate}
	if lit, ok := pattern.(*Literal); ok && lit.v != nil {
		m, err := compileLike(lit.v.(string))
		if err != nil {
			return nil, err
		}
		l.m = m
	}
	return l, nil
}

func (l *Like) Type() arrow.DataType { return arrow.FixedWidthTypes.Boolean }

func (l *Like) String() string {
	not := ""
	if l.negate {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sLIKE %s)", l.e, not, l.pattern)
}

func (l *Like) EvalRow(r exec.Row) (any, error) {
	v, err := l.e.EvalRow(r)
	if err != nil {
		return nil, err
	}
	p, err := l.pattern.EvalRow(r)
	if err != nil || v == nil || p == nil {
		return nil, err
	}
	m := l.m
	if m == nil {
		if m, err = compileLike(p.(string)); err != nil {
			return nil, err
		}
	}
	return m.match(v.(string)) != l.negate, nil
}

func (l *Like) EvalColumnar(mem memory.Allocator, rec arrow.RecordBatch) (arrow.Array, error) {
	so, err := evalOperand(mem, l.e, rec)
	if err != nil {
		return nil, err
	}
	defer so.release()
	po, err := evalOperand(mem, l.pattern, rec)
	if err != nil {
		return nil, err
	}
	defer po.release()
	n := int(rec.NumRows())
	bt := arrow.FixedWidthTypes.Boolean
	if so.isNullScalar() || po.isNullScalar() {
		return nullArray(mem, bt, n), nil
	}
	if so.arr == nil || po.arr != nil {
		// A constant string against a pattern column (or both per row):
		// compile per row; rare in practice.
		return rowFallback(mem, l, rec)
	}
	s := so.arr.(*array.String)
	valid, nulls := andValidity(mem, n, s)
	buf, out := newBits(mem, n)
	m := l.m
	neg := l.negate
	switch m.kind {
	case likeExact:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u((s.Value(i) == m.lit) != neg) << (i & 7)
		}
	case likePrefix:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(strings.HasPrefix(s.Value(i), m.lit) != neg) << (i & 7)
		}
	case likeSuffix:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(strings.HasSuffix(s.Value(i), m.lit) != neg) << (i & 7)
		}
	case likeContains:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(strings.Contains(s.Value(i), m.lit) != neg) << (i & 7)
		}
	default:
		for i := 0; i < n; i++ {
			out[i>>3] |= b2u(m.match(s.Value(i)) != neg) << (i & 7)
		}
	}
	return finish(bt, n, valid, nulls, buf), nil
}

type likeKind uint8

const (
	likeGeneral likeKind = iota
	likeExact
	likePrefix
	likeSuffix
	likeContains
)

type tokKind uint8

const (
	tokLit tokKind = iota // a run of literal characters
	tokOne                // _
	tokAny                // %
)

type likeTok struct {
	kind tokKind
	lit  string
}

type likeMatcher struct {
	kind likeKind
	lit  string // for the fast shapes
	toks []likeTok
}

func compileLike(p string) (*likeMatcher, error) {
	var toks []likeTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, likeTok{kind: tokLit, lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 >= len(p) {
				return nil, fmt.Errorf("LIKE pattern '%s' ends with the escape character", p)
			}
			i++
			lit.WriteByte(p[i])
		case '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != tokAny { // %% is %
				toks = append(toks, likeTok{kind: tokAny})
			}
		case '_':
			flush()
			toks = append(toks, likeTok{kind: tokOne})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	m := &likeMatcher{toks: toks}
	switch {
	case len(toks) == 0:
		m.kind, m.lit = likeExact, ""
	case len(toks) == 1 && toks[0].kind == tokLit:
		m.kind, m.lit = likeExact, toks[0].lit
	case len(toks) == 2 && toks[0].kind == tokLit && toks[1].kind == tokAny:
		m.kind, m.lit = likePrefix, toks[0].lit
	case len(toks) == 2 && toks[0].kind == tokAny && toks[1].kind == tokLit:
		m.kind, m.lit = likeSuffix, toks[1].lit
	case len(toks) == 3 && toks[0].kind == tokAny && toks[1].kind == tokLit && toks[2].kind == tokAny:
		m.kind, m.lit = likeContains, toks[1].lit
	case len(toks) == 1 && toks[0].kind == tokAny:
		m.kind, m.lit = likePrefix, ""
	}
	return m, nil
}

// match is the general matcher: a linear scan that remembers the last %
// and, on a mismatch, retries from one character further (the classic
// wildcard algorithm; at most O(len(s) * len(pattern))).
func (m *likeMatcher) match(s string) bool {
	switch m.kind {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(s, m.lit)
	case likeContains:
		return strings.Contains(s, m.lit)
	}
	toks := m.toks
	si, ti := 0, 0
	star, starSi := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case tokAny:
				star, starSi = ti, si
				ti++
				continue
			case tokOne:
				_, size := utf8.DecodeRuneInString(s[si:])
				si += size
				ti++
				continue
			case tokLit:
				if strings.HasPrefix(s[si:], t.lit) {
					si += len(t.lit)
					ti++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[starSi:])
		starSi += size
		si = starSi
		ti = star + 1
	}
	for ti < len(toks) && toks[ti].kind == tokAny {
		ti++
	}
	return ti == len(toks)
}
