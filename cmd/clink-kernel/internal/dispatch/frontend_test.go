package dispatch

import (
	"strings"
	"testing"
)

// The two kinds of frontend the kernel must satisfy, simulated from the
// messages a request published, as the Jupyter messaging spec defines
// them (nbclient and JupyterLab keep outputs; jupyter console prints).

// notebookOutput is one output as a notebook saves it.
type notebookOutput struct {
	msgType string
	data    map[string]any // display_data, execute_result
	text    string         // stream, error
}

// notebookView is the cell's outputs after the request, as nbclient
// (and JupyterLab) build them: outputs appended in order, an
// update_display_data replacing the data of every output with its
// display_id, clear_output emptying the list (at once, or before the next
// output with wait).
func notebookView(ss []sent) []notebookOutput {
	var outs []notebookOutput
	ids := map[string][]int{}
	clearNext := false
	for _, s := range ss {
		var id string
		if tr, ok := s.content["transient"].(map[string]any); ok {
			id, _ = tr["display_id"].(string)
		}
		switch s.msgType {
		case "clear_output":
			if w, _ := s.content["wait"].(bool); w {
				clearNext = true
			} else {
				outs, ids = nil, map[string][]int{}
			}
			continue
		case "update_display_data":
			for _, i := range ids[id] {
				outs[i].data = s.content["data"].(map[string]any)
			}
			continue
		case "stream", "display_data", "execute_result", "error":
		default:
			continue
		}
		if clearNext {
			outs, ids, clearNext = nil, map[string][]int{}, false
		}
		o := notebookOutput{msgType: s.msgType}
		switch s.msgType {
		case "stream":
			o.text, _ = s.content["text"].(string)
		case "error":
			o.text, _ = s.content["evalue"].(string)
		default:
			o.data = s.content["data"].(map[string]any)
			if id != "" {
				for _, i := range ids[id] { // display_data with a known id updates too
					outs[i].data = o.data
				}
				ids[id] = append(ids[id], len(outs))
			}
		}
		outs = append(outs, o)
	}
	return outs
}

// consoleView is what jupyter console 6 prints for the request: stream
// text, the text/plain of display_data and execute_result as they come
// (update_display_data ignored), and error tracebacks.
func consoleView(ss []sent) string {
	var b strings.Builder
	for _, s := range ss {
		switch s.msgType {
		case "stream":
			b.WriteString(s.content["text"].(string))
		case "display_data", "execute_result":
			if t, ok := s.content["data"].(map[string]any)["text/plain"].(string); ok {
				b.WriteString(t + "\n")
			}
		case "error":
			for _, l := range s.content["traceback"].([]any) {
				b.WriteString(l.(string) + "\n")
			}
		}
	}
	return b.String()
}

// checkSavedOutputs fails t when the cell's saved outputs hold an empty
// output or one that is only a running statement's transient drawing.
func checkSavedOutputs(t *testing.T, ss []sent) []notebookOutput {
	t.Helper()
	outs := notebookView(ss)
	for i, o := range outs {
		if o.msgType == "stream" || o.msgType == "error" {
			if o.text == "" {
				t.Errorf("output %d: an empty %s", i, o.msgType)
			}
			continue
		}
		empty := len(o.data) == 0
		for _, v := range o.data {
			if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
				empty = true
			}
		}
		text, _ := o.data["text/plain"].(string)
		html, _ := o.data["text/html"].(string)
		if empty || text == liveStatus || strings.Contains(text+html, "waiting for rows") || strings.Contains(text+html, ", running") ||
			strings.Contains(html, "clink-progress") {
			t.Errorf("output %d (%s) is not for a reader: %v", i, o.msgType, o.data)
		}
	}
	return outs
}
