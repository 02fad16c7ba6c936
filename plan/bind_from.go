package plan

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

// bindFrom binds a FROM clause. A comma list is a chain of cross joins;
// the join rules turn WHERE equalities between its items into keys.
// Without FROM the relation is one row of no columns.
func (b *binder) bindFrom(from []ast.TableExpr, outer *scope) (Node, *scope, error) {
	if len(from) == 0 {
		return &Values{Rows: []exec.Row{{}}, schema: arrow.NewSchema(nil, nil)}, &scope{outer: outer}, nil
	}
	for _, te := range from {
		if asOf := findAsOf(te); asOf != nil {
			return nil, nil, b.errAt(asOf, "FOR SYSTEM_TIME AS OF (temporal joins) is not supported yet")
		}
	}
	n, sc, err := b.bindTableExpr(from[0], outer)
	if err != nil {
		return nil, nil, err
	}
	for _, te := range from[1:] {
		r, rs, err := b.bindTableExpr(te, outer)
		if err != nil {
			return nil, nil, err
		}
		if n, sc, err = b.joinNodes(n, sc, r, rs, JoinInner, nil, te); err != nil {
			return nil, nil, err
		}
	}
	return n, sc, nil
}

// findAsOf finds a FOR SYSTEM_TIME AS OF in a FROM item, so the error
// names it before anything else of its inputs.
func findAsOf(te ast.TableExpr) ast.Node {
	switch t := te.(type) {
	case *ast.TableName:
		if t.AsOf != nil {
			return t.AsOf
		}
	case *ast.Join:
		if n := findAsOf(t.Left); n != nil {
			return n
		}
		return findAsOf(t.Right)
	}
	return nil
}

func (b *binder) bindTableExpr(te ast.TableExpr, outer *scope) (Node, *scope, error) {
	switch t := te.(type) {
	case *ast.TableName:
		alias := aliasName(t.Alias)
		if t.AsOf != nil {
			return nil, nil, b.errAt(t.AsOf, "FOR SYSTEM_TIME AS OF (temporal joins) is not supported yet")
		}
		n, sc, err := b.bindTableName(t.Name, alias, outer)
		if err != nil {
			return nil, nil, err
		}
		return b.aliasColumns(n, sc, t.Alias)
	case *ast.PathTable:
		qual := aliasName(t.Alias)
		if qual == "" {
			base := filepath.Base(t.Path)
			qual = strings.TrimSuffix(base, filepath.Ext(base))
		}
		n, sc, err := b.bindPath(t.Path, "", qual, t)
		if err != nil {
			return nil, nil, err
		}
		sc.outer = outer
		return b.aliasColumns(n, sc, t.Alias)
	case *ast.Derived:
		if t.Lateral {
			return nil, nil, b.errAt(t, "LATERAL subqueries are not supported yet")
		}
		// A derived table does not see the columns of its FROM siblings,
		// but a correlated subquery's derived table sees the outer query.
		n, sc, err := b.bindQuery(t.Query, outer)
		if err != nil {
			return nil, nil, err
		}
		sc = sc.requalify(aliasName(t.Alias))
		sc.outer = outer
		return b.aliasColumns(n, sc, t.Alias)
	case *ast.TableFunc:
		return b.bindTableFunc(t, outer)
	case *ast.Join:
		return b.bindJoin(t, outer)
	}
	return nil, nil, b.errAt(te, "unsupported FROM item %s", te)
}

func aliasName(a *ast.TableAlias) string {
	if a == nil {
		return ""
	}
	return a.Name.Name
}

// aliasColumns applies t(a, b, ...) of an alias.
func (b *binder) aliasColumns(n Node, sc *scope, a *ast.TableAlias) (Node, *scope, error) {
	if a == nil || len(a.Columns) == 0 {
		return n, sc, nil
	}
	return b.renameColumns(n, sc, a.Columns, a)
}

// bindTableName binds a catalog table, a view or a CTE.
func (b *binder) bindTableName(on ast.ObjectName, alias string, outer *scope) (Node, *scope, error) {
	if len(on.Parts) != 1 {
		return nil, nil, b.errAt(&on, "qualified table names are not supported: %s", on.String())
	}
	name := on.Parts[0].Name
	qual := name
	if alias != "" {
		qual = alias
	}
	for f := b.ctes; f != nil; f = f.parent {
		if d, ok := f.defs[strings.ToLower(name)]; ok {
			sc := d.sc.requalify(qual)
			sc.outer = outer
			return d.node, sc, nil
		}
	}
	e, ok := b.cat.Lookup(name)
	if !ok {
		return nil, nil, b.errAt(&on, "table or view '%s' not found", name)
	}
	if e.IsView() {
		for _, v := range b.views {
			if strings.EqualFold(v, e.Name) {
				return nil, nil, b.errAt(&on, "view '%s' refers to itself", e.Name)
			}
		}
		// A view is bound in its own text and sees no CTE of the query
		// that uses it.
		saved, savedCTEs := b.text, b.ctes
		b.text, b.ctes = e.ViewText, nil
		b.views = append(b.views, e.Name)
		n, sc, err := b.bindQuery(e.View, nil)
		if err == nil {
			n, sc, err = b.renameColumns(n, sc, identsOf(e.ViewColumns), e.View)
		}
		b.views = b.views[:len(b.views)-1]
		b.text, b.ctes = saved, savedCTEs
		if err != nil {
			return nil, nil, b.errAt(&on, "in view '%s': %v", e.Name, err)
		}
		sc = sc.requalify(qual)
		sc.outer = outer
		return n, sc, nil
	}
	tbl, err := e.Resolve()
	if err != nil {
		return nil, nil, b.errAt(&on, "table '%s': %v", e.Name, err)
	}
	n, sc := b.scan(e.Name, e.Connector, tbl, qual)
	sc.outer = outer
	if len(e.Computed) > 0 {
		if n, sc, err = b.computed(e, n, sc); err != nil {
			return nil, nil, err
		}
	}
	if e.Watermark != nil {
		if n, err = b.watermark(e, n, sc); err != nil { // event time: watermark.go
			return nil, nil, err
		}
	}
	return n, sc, nil
}

func identsOf(names []string) []ast.Ident {
	out := make([]ast.Ident, len(names))
	for i, n := range names {
		out[i] = ast.Ident{Name: n}
	}
	return out
}

// computed appends a table's computed columns (col AS expr) to its scan.
func (b *binder) computed(e *Entry, n Node, sc *scope) (Node, *scope, error) {
	exprs := identity(n)
	names := fieldNames(n.Schema())
	out := &scope{outer: sc.outer, cols: append([]column(nil), sc.cols...)}
	saved := b.text
	defer func() { b.text = saved }()
	for _, c := range e.Computed {
		b.text = c.Text
		x, err := b.bindExpr(c.Expr, sc, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("table '%s', computed column '%s': %w", e.Name, c.Name, err)
		}
		if hasSubquery(x) || hasOuterRef(x) {
			return nil, nil, fmt.Errorf("table '%s', computed column '%s': only expressions over the table's columns are allowed", e.Name, c.Name)
		}
		exprs = append(exprs, x)
		names = append(names, c.Name)
		out.cols = append(out.cols, column{qual: sc.cols[0].qual, name: c.Name, typ: x.Type()})
	}
	return NewProject(n, exprs, names), out, nil
}

// bindPath binds a quoted path in FROM ('data/*.parquet') or a
// read_parquet / read_json call; format "" takes it from the name.
func (b *binder) bindPath(path, format, qual string, at ast.Node) (Node, *scope, error) {
	tbl, connector, err := OpenPath(path, format)
	if err != nil {
		return nil, nil, b.errAt(at, "%v", err)
	}
	n, sc := b.scan(path, connector, tbl, qual)
	return n, sc, nil
}

// OpenPath opens a quoted path of FROM as the filesystem table the binder
// scans: format "" takes it from the name (a directory is Parquet); it
// returns the table and its format. The kernel's inspection opens paths
// with it to read their metadata.
func OpenPath(path, format string) (connectors.Table, string, error) {
	if format == "" {
		format = strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
		switch format {
		case "parquet", "json", "ndjson", "jsonl":
		default:
			if strings.ContainsAny(path, "*?[") {
				return nil, "", fmt.Errorf("cannot tell the format of '%s' from its name: use .parquet or .json, read_parquet('...') or read_json('...')", path)
			}
			format = "parquet" // a directory: the connector decides from its files
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

// scan makes a Scan of every column of tbl; the pruning rule narrows it
// to what the query reads.
func (b *binder) scan(name, connector string, tbl connectors.Table, qual string) (Node, *scope) {
	full := tbl.Schema()
	cols := make([]int, full.NumFields())
	fs := make([]arrow.Field, full.NumFields())
	sc := &scope{}
	for i, f := range full.Fields() {
		cols[i], fs[i] = i, f
		sc.cols = append(sc.cols, column{qual: qual, name: f.Name, typ: f.Type})
	}
	return &Scan{TableName: name, Table: tbl, Connector: connector, Columns: cols, schema: arrow.NewSchema(fs, nil)}, sc
}

// bindTableFunc binds a table function in FROM: the window functions
// (TABLE(TUMBLE(...)), bind_window.go) and read_parquet / read_json.
func (b *binder) bindTableFunc(t *ast.TableFunc, outer *scope) (Node, *scope, error) {
	name := strings.ToUpper(t.Name.Name)
	switch name {
	case "TUMBLE", "HOP", "SESSION", "CUMULATE":
		n, sc, err := b.bindWindowTable(t, outer)
		if err != nil {
			return nil, nil, err
		}
		return b.aliasColumns(n, sc, t.Alias)
	case "READ_PARQUET", "READ_JSON", "READ_NDJSON", "READ_JSON_AUTO", "PARQUET_SCAN":
		if len(t.Args) != 1 {
			return nil, nil, b.errAt(t, "%s takes one path or glob", strings.ToLower(name))
		}
		lit, ok := t.Args[0].(*ast.StringLit)
		if !ok {
			return nil, nil, b.errAt(t.Args[0], "%s takes a quoted path or glob", strings.ToLower(name))
		}
		format := "json"
		if name == "READ_PARQUET" || name == "PARQUET_SCAN" {
			format = "parquet"
		}
		qual := aliasName(t.Alias)
		if qual == "" {
			qual = strings.ToLower(name)
		}
		n, sc, err := b.bindPath(lit.Value, format, qual, t)
		if err != nil {
			return nil, nil, err
		}
		sc.outer = outer
		return b.aliasColumns(n, sc, t.Alias)
	}
	return nil, nil, b.errAt(t, "unknown table function %s (known: TUMBLE, HOP, SESSION, CUMULATE, read_parquet, read_json)", t.Name.Name)
}

// errPos is sql.ErrorAt for an error without a node at hand.
var _ = sql.ErrorAt
