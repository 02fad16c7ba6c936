package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/xwb1989/sqlparser"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/sql"
)

// Bind turns a parsed query into a logical plan over cat. It binds twice:
// the first pass records which columns of each scan the query references,
// the second binds again with each scan reading only those (projection
// pushdown without rewriting bound expressions).
func Bind(cat *Catalog, q *sql.Query) (Node, error) {
	return BindWith(cat, q, BindOptions{})
}

// BindOptions configure binding.
type BindOptions struct {
	// Streaming plans every input as a stream (Flink's
	// 'execution.runtime-mode' = 'streaming'): a join of bounded inputs is
	// a streaming join and a GROUP BY a changelog, as they would be over
	// unbounded inputs. Otherwise bounded inputs get batch operators.
	Streaming bool
}

// BindWith is Bind with options.
func BindWith(cat *Catalog, q *sql.Query, opts BindOptions) (Node, error) {
	first := &binder{cat: cat, used: map[int][]bool{}, streaming: opts.Streaming}
	if _, _, err := first.bindStatement(q.AST); err != nil {
		return nil, err
	}
	second := &binder{cat: cat, prune: first.used, streaming: opts.Streaming}
	n, _, err := second.bindStatement(q.AST)
	if err != nil {
		return nil, err
	}
	return n, nil
}

type binder struct {
	cat   *Catalog
	used  map[int][]bool // first pass: referenced columns per scan occurrence
	prune map[int][]bool // second pass: what to read
	scans int            // scan occurrences so far, in binding order
	views []string       // views being expanded, to catch a cycle
	// streaming: plan bounded inputs as streams too (BindOptions).
	streaming bool
}

// finite reports whether n's result is finite as planned: never in
// streaming mode.
func (b *binder) finite(n Node) bool { return !b.streaming && Finite(n) }

func (b *binder) bindStatement(st sqlparser.SelectStatement) (Node, *scope, error) {
	switch s := st.(type) {
	case *sqlparser.Select:
		return b.bindSelect(s)
	case *sqlparser.ParenSelect:
		return b.bindStatement(s.Select)
	case *sqlparser.Union:
		return b.bindUnion(s)
	default:
		return nil, nil, fmt.Errorf("unsupported query form %T", st)
	}
}

func (b *binder) bindUnion(u *sqlparser.Union) (Node, *scope, error) {
	if u.Type != sqlparser.UnionAllStr {
		return nil, nil, fmt.Errorf("%s is not supported yet: use UNION ALL", strings.ToUpper(u.Type))
	}
	var inputs []Node
	var scopes []*scope
	var flatten func(sqlparser.SelectStatement) error
	flatten = func(s sqlparser.SelectStatement) error {
		if uu, ok := s.(*sqlparser.Union); ok && uu.Type == sqlparser.UnionAllStr && len(uu.OrderBy) == 0 && uu.Limit == nil {
			if err := flatten(uu.Left); err != nil {
				return err
			}
			return flatten(uu.Right)
		}
		n, sc, err := b.bindStatement(s)
		if err != nil {
			return err
		}
		inputs = append(inputs, n)
		scopes = append(scopes, sc)
		return nil
	}
	if err := flatten(u.Left); err != nil {
		return nil, nil, err
	}
	if err := flatten(u.Right); err != nil {
		return nil, nil, err
	}
	width := len(scopes[0].cols)
	types := make([]arrow.DataType, width)
	for i, sc := range scopes {
		if len(sc.cols) != width {
			return nil, nil, fmt.Errorf("UNION ALL inputs have different column counts: %d and %d (input %d)", width, len(sc.cols), i+1)
		}
		for c, col := range sc.cols {
			if types[c] == nil {
				types[c] = col.typ
				continue
			}
			t, err := expr.CommonType(types[c], col.typ)
			if err != nil {
				return nil, nil, fmt.Errorf("UNION ALL column %d (%s): %v", c+1, scopes[0].cols[c].name, err)
			}
			types[c] = t
		}
	}
	// Coerce each input to the common types where they differ.
	for i, n := range inputs {
		same := true
		for c, col := range scopes[i].cols {
			if !arrow.TypeEqual(col.typ, types[c]) {
				same = false
			}
		}
		if same {
			continue
		}
		exprs := make([]expr.Expr, width)
		names := make([]string, width)
		for c, col := range scopes[i].cols {
			e, err := expr.Coerce(expr.Col(c, col.typ, col.name), types[c])
			if err != nil {
				return nil, nil, err
			}
			exprs[c] = e
			names[c] = scopes[0].cols[c].name
		}
		inputs[i] = NewProject(n, exprs, names)
	}
	out := &scope{}
	for c, col := range scopes[0].cols {
		out.cols = append(out.cols, column{name: col.name, typ: types[c]})
	}
	var node Node = &Union{Inputs: inputs}
	node, err := b.orderLimit(node, out, u.OrderBy, u.Limit)
	return node, out, err
}

// orderLimit applies ORDER BY (over output columns) and LIMIT to a union.
func (b *binder) orderLimit(n Node, out *scope, ob sqlparser.OrderBy, lim *sqlparser.Limit) (Node, error) {
	var keys []sortKeySpec
	for _, o := range ob {
		idx, err := outputIndex(o.Expr, out, nil)
		if err != nil {
			return nil, err
		}
		if idx < 0 {
			return nil, fmt.Errorf("ORDER BY of a UNION must name an output column: %s", sqlparser.String(o.Expr))
		}
		keys = append(keys, sortKeySpec{col: idx, desc: o.Direction == sqlparser.DescScr})
	}
	return applySortLimit(n, keys, lim)
}

// commaJoin rewrites SELECT ... FROM a, b WHERE c into SELECT ... FROM a
// JOIN b ON c (Nexmark q4, q6 and q9 use this form). For an inner join the
// two mean the same; bindJoin then takes the equalities between the sides
// as keys and filters on the rest. Without a WHERE there is no key, and
// bindFrom reports the cross join. s is not modified.
func commaJoin(s *sqlparser.Select) *sqlparser.Select {
	if len(s.From) != 2 || s.Where == nil {
		return s
	}
	c := *s
	c.From = sqlparser.TableExprs{&sqlparser.JoinTableExpr{LeftExpr: s.From[0], Join: sqlparser.JoinStr, RightExpr: s.From[1],
		Condition: sqlparser.JoinCondition{On: s.Where.Expr}}}
	c.Where = nil
	return &c
}

// bindFrom binds the FROM clause.
func (b *binder) bindFrom(from sqlparser.TableExprs) (Node, *scope, error) {
	if len(from) != 1 {
		return nil, nil, fmt.Errorf("comma-separated FROM lists (implicit cross joins) are not supported: use JOIN ... ON")
	}
	return b.bindTableExpr(from[0])
}

func (b *binder) bindTableExpr(te sqlparser.TableExpr) (Node, *scope, error) {
	switch t := te.(type) {
	case *sqlparser.AliasedTableExpr:
		alias := t.As.String()
		switch e := t.Expr.(type) {
		case sqlparser.TableName:
			return b.bindTableName(e, alias)
		case *sqlparser.Subquery:
			n, sc, err := b.bindStatement(e.Select)
			if err != nil {
				return nil, nil, err
			}
			out := &scope{changelog: sc.changelog}
			for _, c := range sc.cols {
				out.cols = append(out.cols, column{qual: alias, name: c.name, typ: c.typ, rowtime: c.rowtime})
			}
			return n, out, nil
		default:
			return nil, nil, fmt.Errorf("unsupported FROM item %s", sqlparser.String(t))
		}
	case *sqlparser.ParenTableExpr:
		if len(t.Exprs) != 1 {
			return nil, nil, fmt.Errorf("unsupported FROM item %s", sqlparser.String(t))
		}
		return b.bindTableExpr(t.Exprs[0])
	case *sqlparser.JoinTableExpr:
		return b.bindJoin(t)
	default:
		return nil, nil, fmt.Errorf("unsupported FROM item %s", sqlparser.String(te))
	}
}

func (b *binder) bindTableName(tn sqlparser.TableName, alias string) (Node, *scope, error) {
	name := tn.Name.String()
	if !tn.Qualifier.IsEmpty() {
		return nil, nil, fmt.Errorf("qualified table names are not supported: %s", sqlparser.String(tn))
	}
	qual := name
	if alias != "" {
		qual = alias
	}
	if strings.EqualFold(name, "dual") {
		return &Values{Rows: []exec.Row{{}}, schema: arrow.NewSchema(nil, nil)}, &scope{}, nil
	}
	if strings.HasPrefix(name, sql.WindowTablePrefix) {
		return b.bindWindowTable(name, alias) // window table functions: bind_window.go
	}
	if strings.HasPrefix(name, sql.PathTablePrefix) {
		path := strings.TrimPrefix(name, sql.PathTablePrefix)
		if alias == "" {
			qual = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		tbl, connector, err := openPath(path)
		if err != nil {
			return nil, nil, err
		}
		return b.scan(path, connector, tbl, qual)
	}
	e, ok := b.cat.Lookup(name)
	if !ok {
		return nil, nil, fmt.Errorf("table or view '%s' not found", name)
	}
	if e.IsView() {
		for _, v := range b.views {
			if strings.EqualFold(v, e.Name) {
				return nil, nil, fmt.Errorf("view '%s' refers to itself", e.Name)
			}
		}
		b.views = append(b.views, e.Name)
		n, sc, err := b.bindStatement(e.View.AST)
		b.views = b.views[:len(b.views)-1]
		if err != nil {
			return nil, nil, fmt.Errorf("in view '%s': %w", e.Name, err)
		}
		out := &scope{changelog: sc.changelog}
		for _, c := range sc.cols {
			out.cols = append(out.cols, column{qual: qual, name: c.name, typ: c.typ, use: c.use, rowtime: c.rowtime})
		}
		return n, out, nil
	}
	tbl, err := e.Resolve()
	if err != nil {
		return nil, nil, fmt.Errorf("table '%s': %w", e.Name, err)
	}
	n, sc, err := b.scan(e.Name, e.Connector, tbl, qual)
	if err == nil && len(e.Computed) > 0 {
		n, sc, err = b.computed(e, n, sc)
	}
	if err == nil && e.Watermark != nil {
		n, err = b.watermark(e, n, sc) // event time: watermark.go
	}
	return n, sc, err
}

// computed appends a table's computed columns (col AS expr) to its scan.
func (b *binder) computed(e *Entry, n Node, sc *scope) (Node, *scope, error) {
	exprs := make([]expr.Expr, 0, len(sc.cols)+len(e.Computed))
	names := make([]string, 0, cap(exprs))
	out := &scope{}
	for i, c := range sc.cols {
		exprs = append(exprs, expr.Col(i, c.typ, c.name))
		names = append(names, c.name)
		out.cols = append(out.cols, c)
	}
	for _, c := range e.Computed {
		ast, err := sql.ParseExpr(c.Computed)
		if err != nil {
			return nil, nil, fmt.Errorf("table '%s', computed column '%s': %w", e.Name, c.Name, err)
		}
		x, err := b.bindExprIn(ast, sc, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("table '%s', computed column '%s': %w", e.Name, c.Name, err)
		}
		exprs = append(exprs, x)
		names = append(names, c.Name)
		out.cols = append(out.cols, column{qual: sc.cols[0].qual, name: c.Name, typ: x.Type()})
	}
	return NewProject(n, exprs, names), out, nil
}

// openPath opens a quoted path in FROM ('data/*.parquet').
func openPath(path string) (connectors.Table, string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "parquet", "json", "ndjson", "jsonl":
	default:
		if !strings.ContainsAny(path, "*?[") {
			// A directory: let the connector decide from its files.
			format = "parquet"
		} else {
			return nil, "", fmt.Errorf("cannot tell the format of '%s' from its name: use .parquet or .json, or CREATE TABLE ... WITH ('format' = ...)", path)
		}
	}
	if format == "ndjson" || format == "jsonl" {
		format = "json"
	}
	f, ok := connectors.Lookup("filesystem")
	if !ok {
		return nil, "", fmt.Errorf("no filesystem connector in this build")
	}
	t, err := f(map[string]string{"connector": "filesystem", "path": path, "format": format}, nil)
	if err != nil {
		return nil, "", err
	}
	return t, format, nil
}

// scan makes a Scan of tbl. In the first pass it reads every column and
// records references; in the second it reads only the referenced ones.
func (b *binder) scan(name, connector string, tbl connectors.Table, qual string) (Node, *scope, error) {
	id := b.scans
	b.scans++
	full := tbl.Schema()
	var cols []int
	if b.prune != nil {
		used := b.prune[id]
		for i, u := range used {
			if u {
				cols = append(cols, i)
			}
		}
		if len(cols) == 0 {
			cols = []int{0} // COUNT(*): the narrowest honest read is one column
		}
	} else {
		for i := range full.Fields() {
			cols = append(cols, i)
		}
		b.used[id] = make([]bool, len(full.Fields()))
	}
	fs := make([]arrow.Field, len(cols))
	sc := &scope{}
	for i, c := range cols {
		f := full.Field(c)
		fs[i] = f
		col := column{qual: qual, name: f.Name, typ: f.Type}
		if b.used != nil {
			used, c := b.used[id], c
			col.use = func() { used[c] = true }
		}
		sc.cols = append(sc.cols, col)
	}
	return &Scan{TableName: name, Table: tbl, Connector: connector, Columns: cols,
		schema: arrow.NewSchema(fs, nil)}, sc, nil
}
