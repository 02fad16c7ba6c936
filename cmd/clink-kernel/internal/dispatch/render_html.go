package dispatch

import (
	"encoding/json"
	"html"
	"strings"

	"github.com/clink-sql/clink/sql"
)

// tableStyle is inlined so the notebook renders the same everywhere
// (JupyterLab, nbviewer, an exported HTML page) without a stylesheet.
const tableStyle = `<style>.clink-result td.num{text-align:right}.clink-result .null{color:#888;font-style:italic}.clink-result th small{color:#888;font-weight:normal}</style>`

// renderHTML draws rows as an HTML table. Every name and value is escaped;
// NULL is drawn as an italic grey NULL, distinct from the string 'NULL'.
func renderHTML(cols []column, rows [][]cellValue, footer string) string {
	var sb strings.Builder
	sb.WriteString(tableStyle)
	sb.WriteString(`<table class="clink-result"><thead><tr>`)
	for _, c := range cols {
		sb.WriteString("<th>" + html.EscapeString(c.name) + "<br><small>" + html.EscapeString(sql.TypeString(c.typ)) + "</small></th>")
	}
	sb.WriteString("</tr></thead><tbody>")
	for _, row := range rows {
		sb.WriteString("<tr>")
		for i, v := range row {
			if isNumeric(cols[i].typ) {
				sb.WriteString(`<td class="num">`)
			} else {
				sb.WriteString("<td>")
			}
			if v.null {
				sb.WriteString(`<span class="null">NULL</span>`)
			} else {
				sb.WriteString(html.EscapeString(v.s))
			}
			sb.WriteString("</td>")
		}
		sb.WriteString("</tr>")
	}
	sb.WriteString("</tbody></table>")
	sb.WriteString(`<p class="clink-footer"><small>` + html.EscapeString(footer) + "</small></p>")
	return sb.String()
}

// explainBundle renders an EXPLAIN result. Text plans are shown as text and
// as an HTML <pre>. A JSON plan (EXPLAIN (FORMAT JSON)) is also handed to
// the notebook as application/json; renderExplainJSON is the seam where
// its HTML table and mermaid diagram go once that format exists.
func explainBundle(text string) map[string]any {
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return renderExplainJSON(json.RawMessage(trimmed))
	}
	return map[string]any{
		"text/plain": text,
		"text/html":  `<pre class="clink-explain">` + html.EscapeString(text) + "</pre>",
	}
}

// renderExplainJSON shows a JSON plan: the document itself (an object, not
// a string) plus indented text.
func renderExplainJSON(doc json.RawMessage) map[string]any {
	var pretty strings.Builder
	var v any
	_ = json.Unmarshal(doc, &v)
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b = doc
	}
	pretty.Write(b)
	return map[string]any{
		"application/json": doc,
		"text/plain":       pretty.String(),
		"text/html":        `<pre class="clink-explain">` + html.EscapeString(pretty.String()) + "</pre>",
	}
}
