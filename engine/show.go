package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/expr"
	"github.com/clink-sql/clink/plan"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sql/ast"
)

func (s *Session) show(x *ast.Show, text string, w ResultWriter) (Outcome, error) {
	switch x.What {
	case "TABLES", "VIEWS":
		var rows []exec.Row
		for _, t := range s.Tables() {
			if (x.What == "VIEWS") != (t.Kind == "view") && x.What == "VIEWS" {
				continue
			}
			rows = append(rows, exec.Row{t.Name, t.Kind, t.Connector})
		}
		return writeRows(w, []string{"name", "kind", "connector"}, rows)
	case "CONNECTORS":
		var rows []exec.Row
		for _, n := range connectors.Names() {
			rows = append(rows, exec.Row{n})
		}
		return writeRows(w, []string{"connector"}, rows)
	case "CREATE TABLE", "CREATE VIEW":
		name := x.Name.Parts[len(x.Name.Parts)-1].Name
		e, ok := s.cat.Lookup(name)
		if !ok {
			return Outcome{}, sql.ErrorAt(text, x.Name.Pos(), fmt.Sprintf("table or view '%s' not found", name))
		}
		return Outcome{Text: showCreate(e)}, nil
	case "COLUMNS":
		return s.describe(context.Background(), &ast.Describe{Span: x.Span, Name: x.Name}, text, w)
	case "FUNCTIONS":
		var rows []exec.Row
		for _, f := range expr.Functions() {
			rows = append(rows, exec.Row{f.Name})
		}
		return writeRows(w, []string{"function"}, rows)
	}
	return Outcome{}, sql.ErrorAt(text, x.Pos(), fmt.Sprintf("SHOW %s is not supported", x.What))
}

func showCreate(e *plan.Entry) string {
	if e.IsView() {
		return fmt.Sprintf("CREATE VIEW `%s` AS %s\n", e.Name, e.View.String())
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "CREATE TABLE `%s` (\n", e.Name)
	if t, err := e.Resolve(); err == nil {
		for i, f := range t.Schema().Fields() {
			sep := ","
			if i == len(t.Schema().Fields())-1 {
				sep = ""
			}
			fmt.Fprintf(&sb, "  `%s` %s%s\n", f.Name, sql.TypeString(f.Type), sep)
		}
	}
	sb.WriteString(") WITH (\n")
	keys := make([]string, 0, len(e.Options))
	for k := range e.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		sep := ","
		if i == len(keys)-1 {
			sep = ""
		}
		fmt.Fprintf(&sb, "  '%s' = '%s'%s\n", k, e.Options[k], sep)
	}
	sb.WriteString(")\n")
	return sb.String()
}

// describe runs DESCRIBE name | 'path' | query: as Flink's DESCRIBE, each
// column's name, type (a time attribute marked *ROWTIME*), nullability,
// key (PRI(cols) on primary key columns), extras (a computed column's AS
// expression, a METADATA column's FROM key) and the watermark expression
// on its column. \d prints this same table.
func (s *Session) describe(ctx context.Context, x *ast.Describe, text string, w ResultWriter) (Outcome, error) {
	var schema *arrow.Schema
	var entry *plan.Entry
	switch {
	case x.Query != nil:
		n, _, err := s.planQuery(x.Query, text)
		if err != nil {
			return Outcome{}, err
		}
		schema = n.Schema()
	case x.Path != nil:
		q := &ast.Query{Span: x.Path.Span, Body: &ast.Select{Span: x.Path.Span, Items: []ast.SelectItem{&ast.Star{Span: x.Path.Span}},
			From: []ast.TableExpr{&ast.PathTable{Span: x.Path.Span, Path: x.Path.Value}}}}
		n, err := plan.Bind(s.cat, q, s.bindOptions(text))
		if err != nil {
			return Outcome{}, err
		}
		schema = n.Schema()
	default:
		name := x.Name.Parts[len(x.Name.Parts)-1].Name
		e, ok := s.cat.Lookup(name)
		if !ok {
			return Outcome{}, sql.ErrorAt(text, x.Name.Pos(), fmt.Sprintf("table or view '%s' not found", name))
		}
		entry = e
		n, err := plan.Bind(s.cat, selectAll(*x.Name), s.bindOptions(text))
		if err != nil {
			if e.IsView() {
				return Outcome{}, err
			}
			tbl, rerr := e.Resolve()
			if rerr != nil {
				return Outcome{}, rerr
			}
			schema = tbl.Schema()
		} else {
			schema = n.Schema()
		}
	}
	var rows []exec.Row
	for _, f := range schema.Fields() {
		null := "true"
		if !f.Nullable {
			null = "false"
		}
		typ := sql.TypeString(f.Type)
		key, extras, wm := describeExtras(entry, f.Name)
		if key != "" {
			null = "false" // a primary key column is NOT NULL, as Flink has it
		}
		if wm != "" {
			typ += " *ROWTIME*"
		}
		rows = append(rows, exec.Row{f.Name, typ, null, key, extras, wm})
	}
	return writeRows(w, []string{"name", "type", "null", "key", "extras", "watermark"}, rows)
}

// describeExtras is what DESCRIBE says of a table's column besides its
// type: PRI(key columns) on a primary key column, "AS expr" for a computed
// column, "METADATA [FROM 'key']" for a metadata column, and the watermark
// expression on the watermark's column. A view or query has none.
func describeExtras(e *plan.Entry, col string) (key, extras, watermark string) {
	if e == nil || e.IsView() {
		return "", "", ""
	}
	if slices.ContainsFunc(e.PrimaryKey, func(k string) bool { return strings.EqualFold(k, col) }) {
		key = "PRI(" + strings.Join(e.PrimaryKey, ", ") + ")"
	}
	for _, c := range e.Computed {
		if strings.EqualFold(c.Name, col) {
			extras = "AS " + spanText(c.Text, c.Expr)
		}
	}
	if k, ok := e.Options["metadata."+col]; ok {
		extras = "METADATA" // the column's name is the key
		if k != col {
			extras += " FROM '" + strings.ReplaceAll(k, "'", "''") + "'"
		}
	}
	if wm := e.Watermark; wm != nil && strings.EqualFold(wm.Column, col) {
		watermark = spanText(wm.Text, wm.Expr)
	}
	return key, extras, watermark
}

// spanText is the source text of n within text (as the user wrote it).
func spanText(text string, n ast.Node) string {
	lo, hi := n.Pos(), n.End()
	if lo < 0 || hi > len(text) || lo > hi {
		return ""
	}
	return strings.TrimSpace(text[lo:hi])
}
