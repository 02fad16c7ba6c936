package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
)

// fuzzEngine answers every statement at once with one row (a stream for
// a statement mentioning "stream"), so any cell ends.
type fuzzEngine struct{}

func (fuzzEngine) Execute(ctx context.Context, stmt string, w engine.ResultWriter, _ engine.ExecOptions) (engine.Outcome, error) {
	if err := w.Columns(strSchema, !strings.Contains(stmt, "stream")); err != nil {
		return engine.Outcome{}, err
	}
	b := exec.NewRowBatch(strSchema, []exec.Row{{stmt}})
	defer b.Release()
	return engine.Outcome{Rows: 1}, w.Batch(b)
}

func (fuzzEngine) Tables() []engine.TableInfo { return tables() }

// FuzzRequestContent: a request of any type with any content (what a
// signed but hostile or buggy client can send) gets its replies without a
// panic inside the kernel (handle's recover would hide one; the log shows
// it), and the replies are valid JSON (fakeTransport marshals them).
//
//	go test ./cmd/clink-kernel/internal/dispatch/ -run '^$' -fuzz FuzzRequestContent -fuzztime 60s
func FuzzRequestContent(f *testing.F) {
	seeds := map[string]string{
		"execute_request":     `{"code": "SELECT 1;", "silent": false, "store_history": true, "user_expressions": {}, "allow_stdin": true, "stop_on_error": true}`,
		"complete_request":    `{"code": "SELECT * FROM b", "cursor_pos": 15}`,
		"inspect_request":     `{"code": "SELECT bid.price FROM bid", "cursor_pos": 13, "detail_level": 0}`,
		"is_complete_request": `{"code": "SELECT 1"}`,
		"history_request":     `{"output": true, "raw": true, "hist_access_type": "search", "pattern": "S*", "n": 3, "unique": true}`,
		"kernel_info_request": `{}`,
		"comm_open":           `{"comm_id": "x", "target_name": "t", "data": {}}`,
		"comm_info_request":   `{"target_name": null}`,
	}
	for typ, content := range seeds {
		f.Add(typ, []byte(content))
	}
	f.Add("execute_request", []byte(`{"code": "-- clink: rows=1 chart=bar x=s y=s\nSELECT stream"}`))
	f.Add("execute_request", []byte(`{"code": "?bid"}`))
	f.Add("inspect_request", []byte(`{"code": "SELECT 'ȺȺ", "cursor_pos": -7}`))
	f.Fuzz(func(t *testing.T, msgType string, content []byte) {
		switch msgType {
		case "shutdown_request", "interrupt_request":
			return // they end or interrupt the kernel: tested on their own
		}
		var logged bytes.Buffer
		tr := &fakeTransport{}
		k := New(fuzzEngine{}, tr, log.New(&logged, "", 0))
		k.liveInterval, k.abortGrace = time.Millisecond, time.Millisecond
		m := &wire.Message{Header: wire.Header{MsgID: "m", MsgType: msgType}, Content: json.RawMessage(content), Received: time.Now()}
		k.handle(wire.Shell, m)
		if strings.Contains(logged.String(), "panic") {
			t.Fatalf("%s %q: %s", msgType, content, logged.String())
		}
		if out := tr.of("m"); len(out) < 2 || out[0].msgType != "status" || out[len(out)-1].msgType != "status" {
			t.Fatalf("%s: sent %s, want busy ... idle", msgType, types(out))
		}
	})
}
