package dispatch

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"

	"github.com/clink-sql/clink/explain"
)

// explainBundles renders an EXPLAIN result as display bundles. A text plan
// is shown as text and as an HTML <pre>. A JSON plan (EXPLAIN (FORMAT
// JSON)) becomes two outputs: the stages as an HTML table (with the
// document itself as application/json), and the operator graph as a
// mermaid diagram (text/vnd.mermaid, its source as the text fallback).
func explainBundles(text string) []map[string]any {
	trimmed := strings.TrimSpace(text)
	var doc explain.Document
	if strings.HasPrefix(trimmed, "{") && json.Unmarshal([]byte(trimmed), &doc) == nil && len(doc.Stages) > 0 {
		return []map[string]any{
			{
				"application/json": json.RawMessage(trimmed),
				"text/plain":       text,
				"text/html":        explainTable(&doc),
			},
			{
				"text/vnd.mermaid": explainMermaid(&doc),
				"text/plain":       explainMermaid(&doc),
			},
		}
	}
	return []map[string]any{{
		"text/plain": text,
		"text/html":  `<pre class="clink-explain">` + html.EscapeString(text) + "</pre>",
	}}
}

// explainTable is one row per stage: what it is, how batches flowed through
// it (columnar or rows, and why), and the runtime counters when analysed.
func explainTable(doc *explain.Document) string {
	var sb strings.Builder
	sb.WriteString(tableStyle)
	sb.WriteString(`<table class="clink-result clink-explain"><thead><tr><th>id</th><th>operator</th><th>args</th><th>ingests</th><th>emits</th><th>gate</th>`)
	if doc.Analyze {
		sb.WriteString(`<th>rows in</th><th>rows out</th><th>batches out (columnar / rows)</th><th>materialised batches</th>`)
	}
	sb.WriteString("</tr></thead><tbody>")
	esc := html.EscapeString
	for _, st := range doc.Stages {
		gate := ""
		if st.Gate != nil {
			gate = st.Gate.Reason
			if st.Gate.Cause != "" {
				gate += ": " + st.Gate.Cause
			}
		}
		ingests := st.Ingests
		if st.IngestsReason != "" {
			ingests += " (" + st.IngestsReason + ")"
		}
		fmt.Fprintf(&sb, "<tr><td class=\"num\">%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>",
			st.ID, esc(st.Operator), esc(st.Args), esc(ingests), esc(st.Emits), esc(gate))
		if doc.Analyze {
			if r := st.Runtime; r != nil {
				fmt.Fprintf(&sb, `<td class="num">%d</td><td class="num">%d</td><td class="num">%d / %d</td><td class="num">%d</td>`,
					r.RowsIn, r.RowsOut, r.BatchesOutColumnar, r.BatchesOutRows, r.BatchesMaterialized)
			} else {
				sb.WriteString("<td></td><td></td><td></td><td></td>")
			}
		}
		sb.WriteString("</tr>")
	}
	sb.WriteString("</tbody></table>")
	return sb.String()
}

// explainMermaid draws the stages as a flowchart from sources to the root.
func explainMermaid(doc *explain.Document) string {
	var sb strings.Builder
	sb.WriteString("flowchart BT\n")
	for _, st := range doc.Stages {
		label := fmt.Sprintf("[%d] %s", st.ID, st.Operator)
		if st.Emits != "" {
			label += "<br/>emits: " + st.Emits
		}
		if r := st.Runtime; r != nil {
			label += fmt.Sprintf("<br/>rows out: %d", r.RowsOut)
		}
		fmt.Fprintf(&sb, "  s%d[\"%s\"]\n", st.ID, strings.ReplaceAll(label, `"`, "#quot;"))
	}
	for _, st := range doc.Stages {
		for _, in := range st.Inputs {
			fmt.Fprintf(&sb, "  s%d --> s%d\n", in, st.ID)
		}
	}
	return sb.String()
}
