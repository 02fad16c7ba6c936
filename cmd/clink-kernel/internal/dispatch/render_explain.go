package dispatch

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/clink-sql/clink/explain"
)

// planMIME carries the plan document under a vendor type: no frontend
// renders it, so it never outranks the HTML table (JupyterLab ranks
// application/json above text/html), yet a client can read it.
const planMIME = "application/vnd.clink.plan+json"

// explainBundles renders an EXPLAIN result as display bundles. With its
// document (doc, or text when it is the JSON form) every EXPLAIN becomes
// two outputs: the stages as an HTML table (the plan's text as the plain
// fallback, the document under planMIME), and the operator graph as a
// mermaid diagram, both as text/vnd.mermaid and as a fenced block of
// text/markdown, which frontends without a mermaid renderer (nbconvert,
// classic Notebook, VS Code) still show as readable source. Without a
// document the text is shown as text and an HTML <pre>.
func explainBundles(text string, doc *explain.Document) []map[string]any {
	if doc == nil {
		trimmed := strings.TrimSpace(text)
		var d explain.Document
		if strings.HasPrefix(trimmed, "{") && json.Unmarshal([]byte(trimmed), &d) == nil && len(d.Stages) > 0 {
			doc = &d
		}
	}
	if doc == nil || len(doc.Stages) == 0 {
		return []map[string]any{{
			"text/plain": text,
			"text/html":  `<pre class="clink-explain">` + html.EscapeString(text) + "</pre>",
		}}
	}
	table := map[string]any{
		"text/plain": text,
		"text/html":  explainTable(doc),
	}
	if js, err := json.Marshal(doc); err == nil {
		table[planMIME] = json.RawMessage(js)
	}
	graph := explainMermaid(doc)
	return []map[string]any{
		table,
		{
			"text/vnd.mermaid": graph,
			"text/markdown":    "```mermaid\n" + graph + "```\n",
			"text/plain":       graph,
		},
	}
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
	if t := doc.Totals; t != nil {
		fmt.Fprintf(&sb, `<p class="clink-footer"><small>%s</small></p>`, html.EscapeString(fmt.Sprintf(
			"%d rows in %s, %s; %d batches (%d rows) materialised", t.Rows, time.Duration(t.ElapsedNanos).Round(time.Microsecond), t.End, t.BatchesMaterialized, t.RowsMaterialized)))
	}
	for _, r := range doc.Rules {
		fmt.Fprintf(&sb, `<details><summary>%s</summary><pre>%s</pre></details>`, esc(r.Rule), esc(r.Plan))
	}
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
