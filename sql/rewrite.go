package sql

import (
	"sort"
	"strings"
)

// The dialect layer hands queries to xwb1989/sqlparser (MySQL grammar) after
// rewriting, token by token, what that grammar cannot read:
//
//	FROM 'data/*.parquet'              FROM `__clink_path:data/*.parquet`          (PathTablePrefix)
//	CAST(x AS TIMESTAMP(3))            __clink_cast(x, 'TIMESTAMP(3)')             (CastFunc; any type ParseType reads)
//	TIMESTAMP '2020-01-01 00:00:00'    __clink_cast('2020-01-01 00:00:00', 'TIMESTAMP(6)'); DATE '...' likewise
//	INTERVAL '10' SECOND               __clink_interval('10', 'SECOND')            (IntervalFunc)
//	a || b || c                        concat(a, b, c)  (operands are primaries: names, literals, calls, (...), CASE...END)
//	COUNT(*) FILTER (WHERE p)          __clink_filter(COUNT(*), p)                 (FilterFunc)
//	TABLE(TUMBLE(TABLE t, DESCRIPTOR(c), INTERVAL '10' SECOND))
//	                                   `__clink_window:TUMBLE:t:c::10 SECOND`     (WindowTablePrefix, ParseWindowTable)
//	WITH v AS (q) SELECT ... FROM v    SELECT ... FROM (q) AS v                    (each reference inlined)
//	a FULL [OUTER] JOIN b ON c         a STRAIGHT_JOIN b ON c                      (FullJoinStr; a written STRAIGHT_JOIN is refused)
//
// What is left alone: double-quoted "text" (sqlparser reads it as a string
// literal, whereas Flink reads it as an identifier: use backticks for
// names), and string escapes (backslash escapes are honoured, as by the
// statement splitter and sqlparser; Flink itself has none).
//
// Comments are dropped and every token is written with one space before it,
// so no two tokens can fuse into a comment or another operator. Every piece
// of output records the offset in the user's text it came from, so that a
// syntax error sqlparser reports in the rewritten text is reported back at
// the user's line and column.

// FullJoinStr is what a FULL [OUTER] JOIN reaches the binder as: the
// parser's STRAIGHT_JOIN (sqlparser.StraightJoinStr).
const FullJoinStr = "straight_join"

// segment maps a run of rewritten text back to the user's text. A verbatim
// segment (n > 0) is a token copied as is; a synthetic one (n == 0) was
// generated for the construct starting at src.
type segment struct{ out, src, n int }

type rewriter struct {
	p    *parser
	out  strings.Builder
	segs []segment
	ctes []cte // common table expressions in scope, outermost first
}

// cte is WITH name AS (body): body is the token range [lo, hi).
type cte struct {
	name   string
	lo, hi int
}

func (w *rewriter) tok(i int) {
	t := w.p.toks[i]
	if t.kind == tkWord && !isASCII(t.text) {
		// sqlparser's scanner reads ASCII names only; quoted, any name works.
		w.synth(quoteIdent(t.text), t.start)
		return
	}
	w.out.WriteByte(' ')
	w.segs = append(w.segs, segment{out: w.out.Len(), src: t.start, n: len(t.text)})
	w.out.WriteString(t.text)
}

func (w *rewriter) synth(s string, anchor int) {
	w.out.WriteByte(' ')
	w.segs = append(w.segs, segment{out: w.out.Len(), src: anchor})
	w.out.WriteString(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// mapOffset maps a byte offset of the rewritten text to the user's text.
func (w *rewriter) mapOffset(off int) int {
	i := sort.Search(len(w.segs), func(i int) bool { return w.segs[i].out > off }) - 1
	if i < 0 {
		if len(w.segs) == 0 {
			return 0
		}
		return w.segs[0].src
	}
	s := w.segs[i]
	if s.n == 0 {
		return s.src
	}
	d := off - s.out
	if d > s.n {
		d = s.n
	}
	return s.src + d
}

// words that never name a function, so "IN (...)" or "AND (...)" is not
// read as a call (which matters for || operands and FILTER).
var nonFuncWords = wordSet("SELECT FROM WHERE AND OR XOR NOT IN EXISTS AS ON JOIN INNER OUTER CROSS NATURAL USING " +
	"GROUP BY ORDER HAVING LIMIT OFFSET UNION EXCEPT INTERSECT ALL ANY SOME DISTINCT CASE WHEN THEN ELSE END IS NULL " +
	"LIKE REGEXP RLIKE ESCAPE BETWEEN WITH TABLE TRUE FALSE ASC DESC FILTER OVER WINDOW PARTITION ROWS RANGE FOR " +
	"LATERAL DIV COLLATE BINARY INTO VALUES SET")

// words that end a table reference: anything else right after a table name
// is its alias.
var clauseWords = wordSet("WHERE GROUP ORDER LIMIT HAVING UNION EXCEPT INTERSECT JOIN INNER LEFT RIGHT CROSS NATURAL " +
	"STRAIGHT_JOIN FULL ON USING WINDOW OFFSET FOR LOCK INTO")

// words after which a comma-separated list is not the FROM list any more.
var endFromWords = wordSet("WHERE GROUP HAVING ORDER LIMIT UNION EXCEPT INTERSECT WINDOW SELECT")

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func (t token) inSet(set map[string]bool) bool {
	return t.kind == tkWord && set[strings.ToUpper(t.text)]
}

// emitRange rewrites the tokens [lo, hi) of one nesting level.
func (w *rewriter) emitRange(lo, hi int) error {
	toks := w.p.toks
	if lo < hi && toks[lo].is("WITH") {
		return w.emitWith(lo, hi)
	}
	inFrom := false
	prev := -1
	for i := lo; i < hi; {
		t := toks[i]
		if t.is("STRAIGHT_JOIN") {
			return w.p.errAt(t.start, "STRAIGHT_JOIN is not supported")
		}
		if t.is("FULL") && i+1 < hi && (toks[i+1].is("JOIN") || toks[i+1].is("OUTER")) {
			// sqlparser's grammar has no full outer join; its STRAIGHT_JOIN
			// (refused above when written) takes an ON condition and
			// carries FULL through to the binder (FullJoinStr).
			end := i + 1
			if toks[end].is("OUTER") {
				end++
			}
			if end >= hi || !toks[end].is("JOIN") {
				return w.p.errAt(t.start, "expected JOIN after FULL OUTER")
			}
			w.synth(FullJoinStr, t.start)
			prev, i = end, end+1
			continue
		}
		if t.is("OVER") && i+1 < hi && (toks[i+1].isOp("(") || toks[i+1].kind == tkWord) {
			return w.p.errAt(t.start, "window functions (... OVER (...)) are not supported")
		}
		if t.is("FOR") && i+1 < hi && toks[i+1].is("SYSTEM_TIME") {
			return w.p.errAt(t.start, "temporal joins (FOR SYSTEM_TIME AS OF) are not supported")
		}
		tablePos := prev >= 0 && (toks[prev].is("FROM") || toks[prev].is("JOIN") || (toks[prev].isOp(",") && inFrom))
		var end int
		var err error
		if tablePos {
			end, err = w.emitTable(i, hi)
		} else {
			end, err = w.itemEnd(i, hi)
			if err == nil {
				if end < hi && toks[end].isOp("||") {
					end, err = w.emitConcat(i, end, hi)
				} else {
					err = w.emitItem(i, end)
				}
			}
		}
		if err != nil {
			return err
		}
		switch {
		case t.is("FROM"):
			inFrom = true
		case t.inSet(endFromWords):
			inFrom = false
		}
		prev = i
		i = end
	}
	return nil
}

// emitWith inlines WITH name AS (query), ... into each reference of name.
func (w *rewriter) emitWith(lo, hi int) error {
	toks := w.p.toks
	i := lo + 1
	if i < hi && toks[i].is("RECURSIVE") {
		return w.p.errAt(toks[i].start, "WITH RECURSIVE is not supported")
	}
	saved := w.ctes
	defer func() { w.ctes = saved }()
	for {
		if i >= hi || (toks[i].kind != tkWord && toks[i].kind != tkQuoted) {
			return w.errExpectedAt(i, hi, "a name", "in WITH")
		}
		name := toks[i].name()
		i++
		if i < hi && toks[i].isOp("(") {
			return w.p.errAt(toks[i].start, "column lists in WITH are not supported: alias the columns in the query")
		}
		if i >= hi || !toks[i].is("AS") {
			return w.errExpectedAt(i, hi, "AS", "after WITH "+name)
		}
		i++
		if i >= hi || !toks[i].isOp("(") {
			return w.errExpectedAt(i, hi, "'('", "after WITH "+name+" AS")
		}
		closeIdx := w.p.match[i]
		w.ctes = append(w.ctes, cte{name: name, lo: i + 1, hi: closeIdx})
		i = closeIdx + 1
		if i < hi && toks[i].isOp(",") {
			i++
			continue
		}
		break
	}
	if i >= hi {
		return w.errExpectedAt(i, hi, "a query", "after WITH")
	}
	return w.emitRange(i, hi)
}

func (w *rewriter) errExpectedAt(i, hi int, what, context string) error {
	q := &parser{text: w.p.text, toks: w.p.toks, match: w.p.match, pos: i, end: hi}
	return q.errExpected(what, context)
}

// itemEnd returns the end of the primary that starts at token i: a
// parenthesised group, a (qualified) name with an optional call and FILTER
// clause, CASE ... END, an INTERVAL or typed literal, or a single token.
func (w *rewriter) itemEnd(i, hi int) (int, error) {
	toks, match := w.p.toks, w.p.match
	t := toks[i]
	switch {
	case t.isOp("("):
		return match[i] + 1, nil
	case t.is("CASE"):
		depth := 0
		for k := i + 1; k < hi; k++ {
			switch {
			case toks[k].isOp("("):
				k = match[k]
			case toks[k].is("CASE"):
				depth++
			case toks[k].is("END"):
				if depth == 0 {
					return k + 1, nil
				}
				depth--
			}
		}
		return 0, w.p.errAt(t.start, "CASE without END")
	case t.is("INTERVAL"):
		k := i + 1
		if k < hi && (toks[k].isOp("-") || toks[k].isOp("+")) {
			k++
		}
		if k < hi && (toks[k].kind == tkString || toks[k].kind == tkNumber) {
			k++
			if k < hi && toks[k].kind == tkWord {
				k++
			}
		}
		return k, nil
	case (t.is("TIMESTAMP") || t.is("DATE") || t.is("TIMESTAMP_LTZ")) && i+1 < hi && toks[i+1].kind == tkString:
		return i + 2, nil
	case t.inSet(nonFuncWords):
		return i + 1, nil
	case t.kind == tkWord || t.kind == tkQuoted:
		k := i + 1
		for k+1 < hi && toks[k].isOp(".") && (toks[k+1].kind == tkWord || toks[k+1].kind == tkQuoted || toks[k+1].isOp("*")) {
			k += 2
		}
		if k < hi && toks[k].isOp("(") {
			k = match[k] + 1
			if k+2 < hi && toks[k].is("FILTER") && toks[k+1].isOp("(") && toks[k+2].is("WHERE") {
				k = match[k+1] + 1
			}
		}
		return k, nil
	}
	return i + 1, nil
}

// emitItem writes one primary [i, end), rewriting the constructs it holds.
func (w *rewriter) emitItem(i, end int) error {
	toks, match := w.p.toks, w.p.match
	t := toks[i]
	switch {
	case t.is("CAST") && i+1 < end && toks[i+1].isOp("("):
		return w.emitCast(i, match[i+1])
	case t.is("INTERVAL"):
		q := &parser{text: w.p.text, toks: toks, match: match, pos: i, end: end}
		iv, err := q.interval()
		if err != nil {
			return err
		}
		if end < len(toks) && toks[end].is("TO") {
			return w.p.errAt(toks[end].start, "INTERVAL ranges (... TO ...) are not supported")
		}
		w.synth(IntervalFunc+"("+quoteString(iv.Value)+", '"+iv.Unit+"')", t.start)
		return nil
	case end == i+2 && toks[i+1].kind == tkString && (t.is("TIMESTAMP") || t.is("DATE") || t.is("TIMESTAMP_LTZ")):
		typ := "DATE"
		switch strings.ToUpper(t.text) {
		case "TIMESTAMP":
			typ = "TIMESTAMP(6)"
		case "TIMESTAMP_LTZ":
			typ = "TIMESTAMP_LTZ(6)"
		}
		w.synth(CastFunc+"(", t.start)
		w.tok(i + 1)
		w.synth(", '"+typ+"')", t.start)
		return nil
	case t.is("CASE"):
		w.tok(i)
		if err := w.emitRange(i+1, end-1); err != nil {
			return err
		}
		w.tok(end - 1)
		return nil
	}
	// A call followed by FILTER (WHERE p).
	for k := i; k < end; k++ {
		if toks[k].isOp("(") {
			k = match[k]
			continue
		}
		if toks[k].is("FILTER") && k > i && toks[k-1].isOp(")") {
			w.synth(FilterFunc+"(", t.start)
			if err := w.emitFlat(i, k); err != nil {
				return err
			}
			w.synth(",", toks[k].start)
			if err := w.emitRange(k+3, match[k+1]); err != nil {
				return err
			}
			w.synth(")", toks[match[k+1]].start)
			return nil
		}
	}
	return w.emitFlat(i, end)
}

// emitFlat writes tokens [i, end) as they are, rewriting inside parentheses.
func (w *rewriter) emitFlat(i, end int) error {
	for k := i; k < end; k++ {
		if w.p.toks[k].isOp("(") {
			c := w.p.match[k]
			w.tok(k)
			if err := w.emitRange(k+1, c); err != nil {
				return err
			}
			w.tok(c)
			k = c
			continue
		}
		w.tok(k)
	}
	return nil
}

// emitCast writes CAST(expr AS type) as CastFunc(expr, 'TYPE'); closeIdx is
// the index of CAST's ')'.
func (w *rewriter) emitCast(i, closeIdx int) error {
	toks, match := w.p.toks, w.p.match
	as := -1
	for k := i + 2; k < closeIdx; k++ {
		if toks[k].isOp("(") {
			k = match[k]
			continue
		}
		if toks[k].is("AS") {
			as = k
		}
	}
	if as < 0 {
		return w.p.errAt(toks[i].start, "CAST needs (expression AS type)")
	}
	if as == i+2 {
		return w.p.errAt(toks[as].start, "CAST has no expression before AS")
	}
	q := &parser{text: w.p.text, toks: toks, match: match, pos: as + 1, end: closeIdx}
	if q.atEnd() {
		return q.errExpected("a type", "after CAST ... AS")
	}
	typ, err := q.parseType()
	if err != nil {
		return err
	}
	q.nullability()
	if q.pendingGT {
		return q.errAt(toks[q.pos-1].start+1, "unexpected '>' after type")
	}
	if err := q.expectEnd("the CAST type"); err != nil {
		return err
	}
	w.synth(CastFunc+"(", toks[i].start)
	if err := w.emitRange(i+2, as); err != nil {
		return err
	}
	w.synth(", "+quoteString(TypeString(typ))+")", toks[as+1].start)
	return nil
}

// emitConcat writes a chain of primaries joined by || as concat(...). The
// first operand is [i, end); it returns the end of the chain.
func (w *rewriter) emitConcat(i, end, hi int) (int, error) {
	toks := w.p.toks
	type span struct{ lo, hi int }
	operands := []span{{i, end}}
	k := end
	for k < hi && toks[k].isOp("||") {
		if k+1 >= hi {
			return 0, w.p.errAt(toks[k].start, "missing operand after ||")
		}
		e, err := w.itemEnd(k+1, hi)
		if err != nil {
			return 0, err
		}
		operands = append(operands, span{k + 1, e})
		k = e
	}
	for _, o := range operands {
		if o.hi == o.lo+1 && (toks[o.lo].kind == tkOp || (toks[o.lo].inSet(nonFuncWords) && !toks[o.lo].is("NULL"))) {
			return 0, w.p.errAt(toks[o.lo].start, "missing operand for ||, found "+describe(toks[o.lo]))
		}
	}
	w.synth("concat(", toks[i].start)
	for n, o := range operands {
		if n > 0 {
			w.synth(",", toks[o.lo-1].start)
		}
		if err := w.emitItem(o.lo, o.hi); err != nil {
			return 0, err
		}
	}
	w.synth(")", toks[k-1].start)
	return k, nil
}

// emitTable writes the table reference starting at i (right after FROM,
// JOIN, or a comma of the FROM list) and returns where it ends.
func (w *rewriter) emitTable(i, hi int) (int, error) {
	toks := w.p.toks
	t := toks[i]
	switch {
	case t.kind == tkString:
		w.synth(quoteIdent(PathTablePrefix+t.stringValue()), t.start)
		return i + 1, nil
	case t.is("TABLE") && i+1 < hi && toks[i+1].isOp("("):
		end := w.p.match[i+1] + 1
		wt, err := w.windowTVF(i, end)
		if err != nil {
			return 0, err
		}
		w.synth(quoteIdent(wt.TableName()), t.start)
		return end, nil
	case t.kind == tkWord || t.kind == tkQuoted:
		end, err := w.itemEnd(i, hi)
		if err != nil {
			return 0, err
		}
		if end == i+1 {
			for n := len(w.ctes) - 1; n >= 0; n-- {
				c := w.ctes[n]
				if !strings.EqualFold(c.name, t.name()) {
					continue
				}
				// The body sees only the CTEs defined before it.
				saved := w.ctes
				w.ctes = w.ctes[:n]
				w.synth("(", t.start)
				err := w.emitRange(c.lo, c.hi)
				w.synth(")", t.start)
				w.ctes = saved
				if err != nil {
					return 0, err
				}
				aliased := end < hi && (toks[end].is("AS") || toks[end].kind == tkQuoted ||
					(toks[end].kind == tkWord && !toks[end].inSet(clauseWords)))
				if !aliased {
					w.synth("AS "+quoteIdent(c.name), t.start)
				}
				return end, nil
			}
		}
		return end, w.emitItem(i, end)
	}
	end, err := w.itemEnd(i, hi)
	if err != nil {
		return 0, err
	}
	return end, w.emitItem(i, end)
}
