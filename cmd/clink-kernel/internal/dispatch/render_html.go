package dispatch

import (
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
