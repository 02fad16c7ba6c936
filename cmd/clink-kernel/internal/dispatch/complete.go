package dispatch

import (
	"html"
	"strings"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/complete"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/sql"
)

// cursorPos turns a cursor_pos (in code points, as the protocol counts;
// absent means the end) into the completer's cursor.
func cursorPos(pos *int) int {
	if pos == nil {
		return -1
	}
	return max(*pos, 0)
}

type codeRequest struct {
	Code      string `json:"code"`
	CursorPos *int   `json:"cursor_pos"`
}

func (k *Kernel) complete(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	c := complete.Complete(req.Code, cursorPos(req.CursorPos), k.eng.Tables())
	k.reply(ch, m, map[string]any{"status": "ok", "matches": c.Matches,
		"cursor_start": c.Start, "cursor_end": c.End, "metadata": map[string]any{}})
}

// inspectCode describes the table or function under the cursor.
func inspectCode(code string, cursor *int, tables []engine.TableInfo) (map[string]any, bool) {
	word := complete.WordAt(code, cursorPos(cursor))
	if word == "" {
		return nil, false
	}
	for _, t := range tables {
		if !strings.EqualFold(t.Name, word) {
			continue
		}
		kind := t.Kind
		if t.Connector != "" {
			kind += ", connector " + t.Connector
		}
		if t.Bounded {
			kind += ", bounded"
		} else {
			kind += ", unbounded"
		}
		var text, rows strings.Builder
		text.WriteString(t.Name + " (" + kind + ")\n")
		if t.Schema != nil {
			for _, f := range t.Schema.Fields() {
				ts := sql.TypeString(f.Type)
				text.WriteString("  " + f.Name + " " + ts + "\n")
				rows.WriteString("<tr><td>" + html.EscapeString(f.Name) + "</td><td>" + html.EscapeString(ts) + "</td></tr>")
			}
		}
		return map[string]any{
			"text/plain": text.String(),
			"text/html": "<b>" + html.EscapeString(t.Name) + "</b> <small>(" + html.EscapeString(kind) + ")</small>" +
				"<table><tr><th>column</th><th>type</th></tr>" + rows.String() + "</table>",
		}, true
	}
	for _, f := range complete.Functions() {
		if strings.EqualFold(f.Name, word) {
			return map[string]any{"text/plain": f.Signature + "\n  " + f.Doc + "\n"}, true
		}
	}
	return nil, false
}

func (k *Kernel) inspect(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	data, found := inspectCode(req.Code, req.CursorPos, k.eng.Tables())
	if data == nil {
		data = map[string]any{}
	}
	k.reply(ch, m, map[string]any{"status": "ok", "found": found, "data": data, "metadata": map[string]any{}})
}

// isComplete: a cell runs when its last statement ends with ';' (or it has
// no statement at all), as in the shell.
func (k *Kernel) isComplete(ch wire.Channel, m *wire.Message) {
	var req codeRequest
	_ = m.DecodeContent(&req)
	if sql.Complete(req.Code) {
		k.reply(ch, m, map[string]any{"status": "complete"})
		return
	}
	k.reply(ch, m, map[string]any{"status": "incomplete", "indent": ""})
}
