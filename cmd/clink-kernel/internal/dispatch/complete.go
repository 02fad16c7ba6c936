package dispatch

import (
	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/complete"
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
