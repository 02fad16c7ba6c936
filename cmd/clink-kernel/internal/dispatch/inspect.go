package dispatch

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/complete"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/explain"
	"github.com/clink-sql/clink/sql"
	"github.com/clink-sql/clink/sqlvalue"
)

// ColumnStats is what a table's file metadata tells of a column without
// reading its data (Parquet footers): the rows, and the smallest and
// largest value (row form of the column's type) when every file has them.
type ColumnStats struct {
	Rows     int64
	Min, Max any
	HasRange bool
}

// statsEngine is an Engine that can tell a column's statistics cheaply;
// the kernel binary's session does for file-backed tables and for the
// quoted paths of FROM (a table of Kind "file", named by its path).
type statsEngine interface {
	ColumnStats(t engine.TableInfo, col int) (ColumnStats, bool)
}

// fileEngine is an Engine that opens a quoted path of FROM for inspection:
// its schema, read from the files' metadata.
type fileEngine interface {
	FileTable(path string) (engine.TableInfo, bool)
}

func (k *Kernel) inspect(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	data, found := k.inspectCode(req.Code, cursorPos(req.CursorPos))
	if data == nil {
		data = map[string]any{}
	}
	k.reply(ch, m, map[string]any{"status": "ok", "found": found, "data": data, "metadata": map[string]any{}})
}

// inspectCode describes the name under the cursor: a quoted file path or
// a table or view (its DESCRIBE), a column (`t.c`, or a column of the tables the cell names:
// its type and, for a file, what the file's metadata says of it), or a
// function (its signatures and what it does).
func (k *Kernel) inspectCode(code string, cursor int) (map[string]any, bool) {
	if path, ok := pathAt(code, cursor); ok {
		return k.describe("DESCRIBE '"+path+"'", path, "file"), true
	}
	qual, name := complete.NameAt(code, cursor)
	if name == "" {
		return nil, false
	}
	tables := k.eng.Tables()
	items := fromItems(code)
	if qual != "" {
		// An alias of the cell's FROM (b in FROM bid b), then a table.
		for _, it := range items {
			if strings.EqualFold(it.alias, qual) {
				if t, ok := k.itemTable(it, tables); ok {
					if cols := k.columnsNamed([]engine.TableInfo{t}, name); len(cols) > 0 {
						return columnBundle(cols), true
					}
				}
			}
		}
		for _, t := range tables {
			if strings.EqualFold(t.Name, qual) {
				if cols := k.columnsNamed([]engine.TableInfo{t}, name); len(cols) > 0 {
					return columnBundle(cols), true
				}
			}
		}
		// Not table.column (a struct field): the name alone.
	}
	for _, t := range tables {
		if strings.EqualFold(t.Name, name) {
			return k.describeTable(t), true
		}
	}
	for _, it := range items {
		if strings.EqualFold(it.alias, name) {
			if it.path {
				return k.describe("DESCRIBE '"+strings.ReplaceAll(it.name, "'", "''")+"'", it.name, "file"), true
			}
			if t, ok := k.itemTable(it, tables); ok {
				return k.describeTable(t), true
			}
		}
	}
	if cols := k.columnsNamed(k.scope(code, items, tables), name); len(cols) > 0 {
		return columnBundle(cols), true
	}
	return functionBundle(name)
}

// itemTable is the table a FROM item reads: a catalog table, or a quoted
// path opened by the engine.
func (k *Kernel) itemTable(it fromItem, tables []engine.TableInfo) (engine.TableInfo, bool) {
	if it.path {
		if fe, ok := k.eng.(fileEngine); ok {
			return fe.FileTable(it.name)
		}
		return engine.TableInfo{}, false
	}
	for _, t := range tables {
		if strings.EqualFold(t.Name, it.name) && t.Schema != nil {
			return t, true
		}
	}
	return engine.TableInfo{}, false
}

// scope is the tables whose columns an unqualified name can be: those the
// cell's FROM lists read, or, when none resolves (a CTE, a cell without
// FROM yet), the catalog tables the cell names.
func (k *Kernel) scope(code string, items []fromItem, tables []engine.TableInfo) []engine.TableInfo {
	var in []engine.TableInfo
	for _, it := range items {
		t, ok := k.itemTable(it, tables)
		if !ok || slices.ContainsFunc(in, func(o engine.TableInfo) bool { return o.Name == t.Name && o.Kind == t.Kind }) {
			continue
		}
		in = append(in, t)
	}
	if len(in) > 0 {
		return in
	}
	return complete.TablesInScope(code, tables)
}

// describeTable is the table's kind and DESCRIBE's own table (the engine
// runs it, so computed columns show as they bind).
func (k *Kernel) describeTable(t engine.TableInfo) map[string]any {
	kind := t.Kind
	if t.Connector != "" {
		kind += ", connector " + t.Connector
	}
	if t.Bounded {
		kind += ", bounded"
	} else {
		kind += ", unbounded"
	}
	return k.describe(`DESCRIBE "`+strings.ReplaceAll(t.Name, `"`, `""`)+`"`, t.Name, kind)
}

// describe runs a DESCRIBE statement and shows its table under the name
// of what it describes and a note.
func (k *Kernel) describe(stmt, name, note string) map[string]any {
	title := name + " (" + note + ")"
	c := &collector{}
	if _, err := k.eng.Execute(context.Background(), stmt, c, engine.ExecOptions{}); err != nil {
		return map[string]any{"text/plain": title + "\n" + err.Error()}
	}
	footer := fmt.Sprintf("%d columns", len(c.rows))
	if len(c.rows) == 1 {
		footer = "1 column"
	}
	return map[string]any{
		"text/plain": title + "\n" + renderText(c.cols, c.rows, footer),
		"text/html":  "<b>" + html.EscapeString(name) + "</b> <small>(" + html.EscapeString(note) + ")</small>" + renderHTML(c.cols, c.rows, footer),
	}
}

// pathAt is the string literal around cursor (a file path, in FROM), if
// the cursor is inside one.
func pathAt(code string, cursor int) (string, bool) {
	rs := []rune(code)
	if cursor < 0 || cursor > len(rs) {
		cursor = len(rs)
	}
	before := string(rs[:cursor])
	enc, open := sql.Trailing(before)
	if enc != sql.InString {
		return "", false
	}
	rest := code[len(before):]
	if end := strings.IndexByte(rest, '\''); end >= 0 {
		rest = rest[:end]
	}
	path := before[open:] + rest
	if path == "" || strings.ContainsAny(path, "'\n") {
		return "", false
	}
	return path, true
}

// inspectedColumn is one column a name matched.
type inspectedColumn struct {
	table string
	field arrow.Field
	stats ColumnStats
	known bool // stats hold something
}

// columnsNamed are the columns called name in tables, with what their
// files' metadata tells.
func (k *Kernel) columnsNamed(tables []engine.TableInfo, name string) []inspectedColumn {
	var out []inspectedColumn
	se, _ := k.eng.(statsEngine)
	for _, t := range tables {
		if t.Schema == nil {
			continue
		}
		for i, f := range t.Schema.Fields() {
			if !strings.EqualFold(f.Name, name) {
				continue
			}
			c := inspectedColumn{table: t.Name, field: f}
			if t.Kind == "file" {
				c.table = "'" + t.Name + "'"
			}
			if se != nil {
				c.stats, c.known = se.ColumnStats(t, i)
			}
			out = append(out, c)
		}
	}
	return out
}

// columnBundle shows columns as "bid.price BIGINT (nullable)" with their
// statistics: "rows 1,000; min 1, max 99".
func columnBundle(cols []inspectedColumn) map[string]any {
	var text, htm strings.Builder
	for _, c := range cols {
		typ := sql.TypeString(c.field.Type)
		null := "NOT NULL"
		if c.field.Nullable {
			null = "nullable"
		}
		fmt.Fprintf(&text, "%s.%s %s (%s)\n", c.table, c.field.Name, typ, null)
		fmt.Fprintf(&htm, "<p><b>%s.%s</b> <code>%s</code> <small>(%s)</small>", html.EscapeString(c.table),
			html.EscapeString(c.field.Name), html.EscapeString(typ), null)
		if c.known {
			st := statsText(c.stats, c.field.Type)
			fmt.Fprintf(&text, "  %s\n", st)
			htm.WriteString("<br><small>" + html.EscapeString(st) + "</small>")
		}
		htm.WriteString("</p>")
	}
	return map[string]any{"text/plain": text.String(), "text/html": htm.String()}
}

// statsText is "1,000 rows; min 1, max 99" (values as the
// tables show them).
func statsText(st ColumnStats, t arrow.DataType) string {
	s := explain.GroupDigits(st.Rows) + " rows"
	if st.HasRange {
		lo, hi := cellOf(st.Min, t), cellOf(st.Max, t)
		s += fmt.Sprintf("; min %s, max %s", sqlvalue.Display(lo.s, lo.null), sqlvalue.Display(hi.s, hi.null))
	}
	return s
}

// functionBundle is a function's signatures and description.
func functionBundle(name string) (map[string]any, bool) {
	var sigs []string
	doc := ""
	for _, f := range complete.Functions() {
		if strings.EqualFold(f.Name, name) {
			for _, sig := range strings.Split(f.Signature, "; ") {
				if !slices.Contains(sigs, sig) {
					sigs = append(sigs, sig)
				}
			}
			doc = f.Doc
		}
	}
	if sigs == nil {
		return nil, false
	}
	text := strings.Join(sigs, "\n") + "\n  " + doc + "\n"
	return map[string]any{
		"text/plain": text,
		"text/html":  "<pre>" + html.EscapeString(strings.Join(sigs, "\n")) + "</pre><p>" + html.EscapeString(doc) + "</p>",
	}, true
}

// collector keeps a small result (DESCRIBE's) as table cells.
type collector struct {
	cols []column
	rows [][]cellValue
}

func (c *collector) Columns(schema *arrow.Schema, _ bool) error {
	for _, f := range schema.Fields() {
		c.cols = append(c.cols, column{name: f.Name, typ: f.Type})
	}
	return nil
}

func (c *collector) Batch(b *exec.Batch) error {
	for _, r := range b.Rows() {
		row := make([]cellValue, len(c.cols))
		for i := range row {
			row[i] = cellOf(r[i], c.cols[i].typ)
		}
		c.rows = append(c.rows, row)
	}
	return nil
}
