package sql

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// Parse parses one statement (a trailing ';' is allowed). Queries go to
// xwb1989/sqlparser after the dialect rewrite (see rewrite.go); the other
// statements are read by the dialect layer itself. Every error is an *Error
// whose Line and Column point into text.
func Parse(text string) (stmt Statement, err error) {
	// Boundary: a bug in this layer must surface as an error, not take the
	// shell or the kernel down. (sqlparser's own panics are caught closer,
	// in parseSQL, and reported differently.)
	defer func() {
		if r := recover(); r != nil {
			stmt, err = nil, &Error{Msg: fmt.Sprintf("internal error in the SQL parser: %v", r)}
		}
	}()
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	for p.end > 0 && p.toks[p.end-1].isOp(";") {
		p.end--
	}
	for i := 0; i < p.end; i++ {
		if p.toks[i].isOp(";") {
			return nil, p.errAt(p.toks[i].start, "only one statement is allowed here, found ';' before the end")
		}
	}
	if p.atEnd() {
		return nil, &Error{Msg: "empty statement"}
	}
	return p.statement()
}

// statement dispatches on the first keyword.
func (p *parser) statement() (Statement, error) {
	t := p.peek()
	switch {
	case t.is("SELECT"), t.is("WITH"), t.isOp("("):
		return p.query(p.pos, p.end)
	case t.is("CREATE"):
		return p.create()
	case t.is("DROP"):
		return p.drop()
	case t.is("EXPLAIN"):
		return p.explain()
	case t.is("SET"):
		return p.set()
	case t.is("RESET"):
		return p.reset()
	case t.is("SHOW"):
		return p.show()
	case t.is("DESCRIBE"), t.is("DESC"):
		p.pos++
		name, err := p.qualifiedName("after " + strings.ToUpper(t.text))
		if err != nil {
			return nil, err
		}
		return &Describe{Name: name}, p.expectEnd(strings.ToUpper(t.text) + " " + name)
	case t.is("INSERT"):
		return p.insert()
	case t.is("VALUES"):
		return nil, p.errAt(t.start, "VALUES is not supported: use SELECT 1, 'a' [UNION ALL SELECT ...]")
	}
	what := describe(t)
	if t.kind == tkWord {
		what = strings.ToUpper(t.text)
	}
	return nil, p.errAt(t.start, fmt.Sprintf("unknown statement %s: expected SELECT, WITH, INSERT, CREATE, DROP, EXPLAIN, SET, RESET, SHOW or DESCRIBE", what))
}

// query parses tokens [lo, hi) as a query.
func (p *parser) query(lo, hi int) (*Query, error) {
	if lo >= hi {
		q := &parser{text: p.text, toks: p.toks, match: p.match, pos: lo, end: hi}
		return nil, q.errExpected("a query", "")
	}
	// sqlparser reads (SELECT ...) UNION (SELECT ...) but not a query
	// wrapped whole in parentheses.
	if p.toks[lo].isOp("(") && p.match[lo] == hi-1 && lo+1 < hi-1 {
		q, err := p.query(lo+1, hi-1)
		if err != nil {
			return nil, err
		}
		p.pos = hi
		return q, nil
	}
	w := &rewriter{p: p}
	if err := w.emitRange(lo, hi); err != nil {
		return nil, err
	}
	st, err := parseSQL(w.out.String())
	if err != nil {
		return nil, w.mapError(err, lo, hi)
	}
	sel, ok := st.(sqlparser.SelectStatement)
	if !ok {
		return nil, p.errAt(p.toks[lo].start, fmt.Sprintf("expected a query (SELECT ...), found %s", describe(p.toks[lo])))
	}
	p.pos = hi
	return &Query{AST: sel, Text: p.text[p.toks[lo].start:p.toks[hi-1].end]}, nil
}

// ParseExpr parses one scalar expression in the dialect (the text of a
// computed column or a WATERMARK in CREATE TABLE, for instance), with the
// same rewrites as a query: CAST, INTERVAL, ||, typed literals.
func ParseExpr(text string) (e sqlparser.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, &Error{Msg: fmt.Sprintf("internal error in the SQL parser: %v", r)}
		}
	}()
	p, err := newParser(text)
	if err != nil {
		return nil, err
	}
	if p.atEnd() {
		return nil, &Error{Msg: "empty expression"}
	}
	return p.expr(0, p.end)
}

// expr parses tokens [lo, hi) as one scalar expression.
func (p *parser) expr(lo, hi int) (sqlparser.Expr, error) {
	w := &rewriter{p: p}
	w.synth("select", p.toks[lo].start)
	if err := w.emitRange(lo, hi); err != nil {
		return nil, err
	}
	st, err := parseSQL(w.out.String())
	if err != nil {
		return nil, w.mapError(err, lo, hi)
	}
	sel, ok := st.(*sqlparser.Select)
	if ok && len(sel.SelectExprs) == 1 && sel.Where == nil && sel.GroupBy == nil && sel.Having == nil &&
		sel.OrderBy == nil && sel.Limit == nil && sqlparser.String(sel.From) == "dual" {
		if ae, ok := sel.SelectExprs[0].(*sqlparser.AliasedExpr); ok && ae.As.IsEmpty() {
			return ae.Expr, nil
		}
	}
	return nil, p.errAt(p.toks[lo].start, "expected one expression")
}

// parserCrash is a panic of sqlparser caught by parseSQL.
type parserCrash struct{ v any }

func (c *parserCrash) Error() string { return fmt.Sprint(c.v) }

// parseSQL calls sqlparser behind recover(): it panics on some inputs
// (e.g. "/*!*/"), and one bad statement must not end the session.
func parseSQL(s string) (st sqlparser.Statement, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, &parserCrash{r}
		}
	}()
	return sqlparser.ParseStrictDDL(s)
}

var posRE = regexp.MustCompile(`(?s)^(.*) at position (\d+)(?: near '(.*)')?$`)

// mapError turns a sqlparser error about the rewritten text of tokens
// [lo, hi) into an *Error at the user's token.
func (w *rewriter) mapError(err error, lo, hi int) *Error {
	toks, text := w.p.toks, w.p.text
	var crash *parserCrash
	if errors.As(err, &crash) {
		return errAt(text, toks[lo].start, fmt.Sprintf("the query parser failed on this statement (%v)", crash.v))
	}
	m := posRE.FindStringSubmatch(err.Error())
	if m == nil {
		return errAt(text, toks[lo].start, err.Error())
	}
	pos, _ := strconv.Atoi(m[2])
	out := w.out.String()
	// sqlparser's position is one past the character after the offending
	// token (it has read one character ahead), so the token's last byte
	// is at pos-2.
	if m[3] == "" && pos-1 >= len(out) {
		return errAt(text, toks[hi-1].end, m[1]+": unexpected end of statement")
	}
	off := min(max(pos-2, 0), len(out)-1)
	src := w.mapOffset(off)
	k := lo
	for k+1 < hi && toks[k+1].start <= src {
		k++
	}
	return errAt(text, toks[k].start, fmt.Sprintf("%s at or near %s", m[1], describe(toks[k])))
}

// explain reads EXPLAIN [PLAN FOR] [ANALYZE] [VERBOSE] [FORMAT x]
// [(option [value], ...)] <statement>.
func (p *parser) explain() (Statement, error) {
	p.pos++ // EXPLAIN
	ex := &Explain{Options: map[string]string{}}
	if p.peek().is("PLAN") && p.peekAt(1).is("FOR") {
		p.pos += 2
	}
	for {
		t := p.peek()
		switch {
		case t.is("ANALYZE"):
			p.pos++
			ex.Analyze = true
			continue
		case t.is("VERBOSE"):
			p.pos++
			ex.Options["VERBOSE"] = "true"
			continue
		case t.is("FORMAT"):
			p.pos++
			p.acceptOp("=")
			v, err := p.optionValue("FORMAT")
			if err != nil {
				return nil, err
			}
			ex.Options["FORMAT"] = v
			continue
		case t.isOp("(") && !p.peekAt(1).is("SELECT") && !p.peekAt(1).is("WITH") && !p.peekAt(1).isOp("("):
			if err := p.explainOptions(ex); err != nil {
				return nil, err
			}
			continue
		}
		break
	}
	if p.atEnd() {
		return nil, p.errExpected("a statement", "after EXPLAIN")
	}
	if p.peek().is("EXPLAIN") {
		return nil, p.errAt(p.peek().start, "EXPLAIN cannot explain EXPLAIN")
	}
	st, err := p.statement()
	if err != nil {
		return nil, err
	}
	ex.Stmt = st
	return ex, nil
}

// explainOptions reads (KEY [=] [value], ...); a key without a value is
// "true". ANALYZE sets Analyze instead of an option.
func (p *parser) explainOptions(ex *Explain) error {
	closeIdx := p.match[p.pos]
	saved := p.end
	p.pos++
	p.end = closeIdx
	for !p.atEnd() {
		kt := p.peek()
		key, err := p.ident("of an EXPLAIN option")
		if err != nil {
			return err
		}
		key = strings.ToUpper(key)
		val := "true"
		p.acceptOp("=")
		if !p.atEnd() && !p.peek().isOp(",") {
			if val, err = p.optionValue(key); err != nil {
				return err
			}
		}
		if key == "ANALYZE" {
			ex.Analyze = !strings.EqualFold(val, "false") && val != "0"
		} else {
			if _, dup := ex.Options[key]; dup {
				return p.errAt(kt.start, "EXPLAIN option "+key+" given twice")
			}
			ex.Options[key] = val
		}
		if !p.acceptOp(",") && !p.atEnd() {
			return p.errExpected("',' or ')'", "in EXPLAIN options")
		}
	}
	p.end = saved
	p.pos = closeIdx + 1
	return nil
}

// optionValue reads one option value: a string (as is), a number, or a
// word (upper-cased, e.g. FORMAT json -> JSON).
func (p *parser) optionValue(key string) (string, error) {
	t := p.next()
	switch t.kind {
	case tkString:
		return t.stringValue(), nil
	case tkNumber:
		return t.text, nil
	case tkWord:
		return strings.ToUpper(t.text), nil
	case tkQuoted:
		return t.name(), nil
	}
	return "", p.errAt(t.start, fmt.Sprintf("expected a value for %s, found %s", key, describe(t)))
}

// set reads SET, SET 'k' = 'v', SET k = v, SET k TO v (quotes optional).
func (p *parser) set() (Statement, error) {
	p.pos++
	if p.atEnd() {
		return &Set{}, nil
	}
	key, err := p.settingKey("SET")
	if err != nil {
		return nil, err
	}
	if !p.acceptOp("=") && !p.accept("TO") {
		return nil, p.errExpected("'=' or TO", "after SET "+key)
	}
	if p.atEnd() {
		return nil, p.errExpected("a value", "for SET "+key)
	}
	var val string
	if p.end-p.pos == 1 && p.peek().kind == tkString {
		val = p.next().stringValue()
	} else {
		val, _, _ = p.rawUntil(func(token) bool { return false })
	}
	return &Set{Key: key, Value: val}, nil
}

// settingKey reads a quoted or bare dotted key (table.exec.mini-batch.enabled).
func (p *parser) settingKey(stmt string) (string, error) {
	t := p.peek()
	if t.kind == tkString {
		p.pos++
		return t.stringValue(), nil
	}
	key, lo, _ := p.rawUntil(func(t token) bool { return t.isOp("=") || t.is("TO") })
	if key == "" {
		return "", p.errExpected("a setting name", "after "+stmt)
	}
	for _, k := range p.toks[lo:p.pos] {
		if k.kind == tkString || k.isOp("(") {
			return "", p.errAt(k.start, "a setting name is a quoted string or a dotted name, found "+describe(k))
		}
	}
	return key, nil
}

// reset reads RESET or RESET 'key'.
func (p *parser) reset() (Statement, error) {
	p.pos++
	if p.atEnd() {
		return &Reset{}, nil
	}
	t := p.peek()
	if t.kind == tkString {
		p.pos++
		return &Reset{Key: t.stringValue()}, p.expectEnd("RESET " + t.text)
	}
	key, _, _ := p.rawUntil(func(token) bool { return false })
	return &Reset{Key: key}, nil
}

// show reads SHOW TABLES | VIEWS | FUNCTIONS | CONNECTORS | CREATE TABLE|VIEW name.
func (p *parser) show() (Statement, error) {
	p.pos++
	t := p.next()
	what := strings.ToUpper(t.text)
	switch {
	case t.kind == tkWord && (what == "TABLES" || what == "VIEWS" || what == "FUNCTIONS" || what == "CONNECTORS"):
		return &Show{What: what}, p.expectEnd("SHOW " + what)
	case t.is("CREATE"):
		k := p.next()
		if !k.is("TABLE") && !k.is("VIEW") {
			return nil, p.errAt(k.start, "expected TABLE or VIEW after SHOW CREATE, found "+describe(k))
		}
		what = "CREATE " + strings.ToUpper(k.text)
		name, err := p.qualifiedName("after SHOW " + what)
		if err != nil {
			return nil, err
		}
		return &Show{What: what, Name: name}, p.expectEnd("SHOW " + what + " " + name)
	}
	return nil, p.errAt(t.start, "expected TABLES, VIEWS, FUNCTIONS, CONNECTORS or CREATE TABLE after SHOW, found "+describe(t))
}

// insert reads INSERT INTO name <query>.
func (p *parser) insert() (Statement, error) {
	p.pos++
	if t := p.peek(); t.is("OVERWRITE") {
		return nil, p.errAt(t.start, "INSERT OVERWRITE is not supported")
	}
	if err := p.expect("INTO", "after INSERT"); err != nil {
		return nil, err
	}
	name, err := p.qualifiedName("after INSERT INTO")
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.isOp("(") && !p.peekAt(1).is("SELECT") && !p.peekAt(1).is("WITH"):
		return nil, p.errAt(t.start, "INSERT column lists are not supported: select the columns in the sink's order")
	case t.is("VALUES"):
		return nil, p.errAt(t.start, "INSERT ... VALUES is not supported: use INSERT INTO t SELECT ...")
	case !t.is("SELECT") && !t.is("WITH") && !t.isOp("("):
		return nil, p.errExpected("a query", "after INSERT INTO "+name)
	}
	q, err := p.query(p.pos, p.end)
	if err != nil {
		return nil, err
	}
	return &Insert{Table: name, Query: q}, nil
}
