package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/changelog/changelogtest"
	"github.com/clink-sql/clink/exec/ops"
	"github.com/clink-sql/clink/sql"
)

type sent struct {
	reply   bool
	ch      wire.Channel
	msgType string
	parent  string
	content map[string]any
}

// fakeTransport records what the kernel sends, in order.
type fakeTransport struct {
	mu  sync.Mutex
	out []sent
}

func (f *fakeTransport) record(s sent, content any) error {
	b, err := json.Marshal(content) // also proves the content is valid JSON
	if err != nil {
		return err
	}
	_ = json.Unmarshal(b, &s.content)
	f.mu.Lock()
	f.out = append(f.out, s)
	f.mu.Unlock()
	return nil
}

func (f *fakeTransport) Reply(ch wire.Channel, req *wire.Message, msgType string, content any) error {
	return f.record(sent{reply: true, ch: ch, msgType: msgType, parent: req.Header.MsgID}, content)
}

func (f *fakeTransport) Publish(parent *wire.Message, msgType string, content any) error {
	return f.record(sent{msgType: msgType, parent: parent.Header.MsgID}, content)
}

func (f *fakeTransport) of(parent string) []sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var r []sent
	for _, s := range f.out {
		if s.parent == parent {
			r = append(r, s)
		}
	}
	return r
}

func types(ss []sent) string {
	var t []string
	for _, s := range ss {
		t = append(t, s.msgType)
	}
	return strings.Join(t, ",")
}

// fakeEngine answers a few fixed statements.
type fakeEngine struct {
	started chan struct{}
	fixture []exec.Row // the changes "changelog-fixture" sends
	// shown, when set, reports whether the kernel has published a
	// message containing the text (the slow scan waits for its progress).
	shown func(text string) bool
}

var strSchema = arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)

func (e *fakeEngine) Execute(ctx context.Context, stmt string, w engine.ResultWriter, opts engine.ExecOptions) (engine.Outcome, error) {
	for strings.HasPrefix(stmt, "--") { // the real parser skips comments
		_, stmt, _ = strings.Cut(stmt, "\n")
	}
	switch stmt {
	case "slowstream":
		// A stream that takes a while to start: its progress is drawn,
		// then its live table takes over.
		opts.Progress.RowsRead.Store(7)
		for !e.shown("7 rows read") {
			time.Sleep(time.Millisecond)
		}
		if err := w.Columns(strSchema, false); err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewRowBatch(strSchema, []exec.Row{{"x"}})
		defer b.Release()
		return engine.Outcome{}, w.Batch(b)
	case "slowscan":
		// A bounded scan of 1,000 rows (2 MiB) whose progress is watched
		// at a quarter and at the end before its result arrives.
		p := opts.Progress
		p.RowsTotal.Store(1000)
		p.BytesTotal.Store(2 << 20)
		for _, step := range []struct {
			rows, bytes int64
			want        string
		}{{250, 512 << 10, "250 / 1,000 rows (25%), 512.0 KiB / 2.0 MiB read"}, {1000, 2 << 20, "1,000 / 1,000 rows (100%)"}} {
			p.RowsRead.Store(step.rows)
			p.BytesRead.Store(step.bytes)
			for !e.shown(step.want) {
				select {
				case <-ctx.Done():
					return engine.Outcome{}, ctx.Err()
				case <-time.After(time.Millisecond):
				}
			}
		}
	case "slowquiet":
		// A long statement without output (an INSERT whose message the
		// engine leaves out): its progress is drawn, then nothing follows.
		opts.Progress.RowsRead.Store(9)
		for !e.shown("9 rows read") {
			time.Sleep(time.Millisecond)
		}
		return engine.Outcome{}, nil
	case "boom":
		panic("engine exploded")
	case "fail":
		return engine.Outcome{}, &sql.Error{Msg: "bad thing", Line: 1, Column: 3}
	case "block":
		if err := w.Columns(strSchema, false); err != nil {
			return engine.Outcome{}, err
		}
		close(e.started)
		for {
			b := exec.NewRowBatch(strSchema, []exec.Row{{"x"}})
			err := w.Batch(b)
			b.Release()
			if err != nil {
				return engine.Outcome{}, nil
			}
			select {
			case <-ctx.Done():
				return engine.Outcome{}, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	case "explainblock":
		// EXPLAIN ANALYZE of a stream: runs until cancelled, then reports.
		close(e.started)
		<-ctx.Done()
		return engine.Outcome{Text: "[1] Scan bid\n"}, nil
	case "ack":
		return engine.Outcome{Message: "done."}, nil
	case "topn":
		// A continuous top 3 by n DESC: the engine gives the order first.
		schema := arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String},
			{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
		if ow, ok := w.(engine.OrderedWriter); ok {
			ow.ResultOrder([]ops.SortKey{{Col: 2, Desc: true}})
		}
		if err := w.Columns(schema, false); err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewRowBatch(schema, []exec.Row{{"+I", "a", int64(1)}, {"+I", "bb", int64(7)}, {"+I", "c", int64(3)},
			{"-D", "a", int64(1)}, {"+I", "ddd", int64(5)}})
		defer b.Release()
		return engine.Outcome{}, w.Batch(b)
	case "grow":
		// An updating result of 30 keys, each inserted then updated once:
		// 30 rows after 90 changes.
		schema := arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String},
			{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
		if err := w.Columns(schema, false); err != nil {
			return engine.Outcome{}, err
		}
		var rows []exec.Row
		for i := 0; i < 30; i++ {
			rows = append(rows, exec.Row{"+I", fmt.Sprintf("key%02d", i), int64(1)})
		}
		for i := 0; i < 30; i++ {
			rows = append(rows, exec.Row{"-U", fmt.Sprintf("key%02d", i), int64(1)}, exec.Row{"+U", fmt.Sprintf("key%02d", i), int64(2)})
		}
		b := exec.NewRowBatch(schema, rows)
		defer b.Release()
		return engine.Outcome{}, w.Batch(b)
	case "changelog-fixture":
		// The changelog the shell's table mode test reads too.
		schema := arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String},
			{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
		if err := w.Columns(schema, false); err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewRowBatch(schema, e.fixture)
		defer b.Release()
		return engine.Outcome{}, w.Batch(b)
	case "changelog":
		// An updating result: the row kind first, as the engine emits it.
		schema := arrow.NewSchema([]arrow.Field{{Name: "op", Type: arrow.BinaryTypes.String},
			{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)
		if err := w.Columns(schema, false); err != nil {
			return engine.Outcome{}, err
		}
		b := exec.NewRowBatch(schema, []exec.Row{{"+I", "a", int64(1)}, {"+I", "b", int64(1)},
			{"-U", "a", int64(1)}, {"+U", "a", int64(2)}, {"-D", "b", int64(1)}, {"+I", "c", int64(5)}})
		defer b.Release()
		return engine.Outcome{}, w.Batch(b)
	}
	if err := w.Columns(strSchema, true); err != nil {
		return engine.Outcome{}, err
	}
	b := exec.NewRowBatch(strSchema, []exec.Row{{"<" + stmt + ">"}, {nil}})
	defer b.Release()
	return engine.Outcome{Rows: 2}, w.Batch(b)
}

func (e *fakeEngine) Tables() []engine.TableInfo { return nil }

func newTestKernel() (*Kernel, *fakeTransport, *fakeEngine) {
	tr := &fakeTransport{}
	eng := &fakeEngine{started: make(chan struct{})}
	k := New(eng, tr, log.New(io.Discard, "", 0))
	k.liveInterval = time.Millisecond
	return k, tr, eng
}

var nextID int

func request(msgType string, content any) *wire.Message {
	nextID++
	b, _ := json.Marshal(content)
	return &wire.Message{
		Header:   wire.Header{MsgID: msgType + "-" + string(rune('a'+nextID%26)) + time.Now().Format("150405.000000000"), MsgType: msgType},
		Content:  b,
		Received: time.Now(),
	}
}

func TestExecuteOrderAndCount(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "hello"})
	k.handle(wire.Shell, m)
	got := types(tr.of(m.Header.MsgID))
	if got != "status,execute_input,execute_result,execute_reply,status" {
		t.Fatalf("messages: %s", got)
	}
	res := tr.of(m.Header.MsgID)[2].content
	html := res["data"].(map[string]any)["text/html"].(string)
	if !strings.Contains(html, "&lt;hello&gt;") || !strings.Contains(html, `<span class="null">NULL</span>`) {
		t.Fatalf("html: %s", html)
	}
	// The plain-text footer reads as the shell's, without parentheses.
	if text := res["data"].(map[string]any)["text/plain"].(string); !strings.HasSuffix(text, "\nNULL\n2 rows, finished") {
		t.Fatalf("text: %q", text)
	}
	if res["execution_count"].(float64) != 1 {
		t.Fatalf("count %v", res["execution_count"])
	}
}

func TestErrorAbortsQueued(t *testing.T) {
	k, tr, _ := newTestKernel()
	fail := request("execute_request", map[string]any{"code": "x; fail; y"})
	queued := request("execute_request", map[string]any{"code": "hello"})
	info := request("kernel_info_request", map[string]any{})
	fail.Received = time.Now()
	queued.Received, info.Received = fail.Received, fail.Received
	k.EnqueueShell(queued)
	k.EnqueueShell(info)
	k.handle(wire.Shell, fail)
	ss := tr.of(fail.Header.MsgID)
	if got := types(ss); got != "status,execute_input,execute_result,error,execute_reply,status" {
		t.Fatalf("failed cell: %s", got)
	}
	reply := ss[4].content
	if reply["status"] != "error" || reply["ename"] != "SQLError" || reply["execution_count"].(float64) != 1 {
		t.Fatalf("reply %v", reply)
	}
	if tb := strings.Join(toStrings(reply["traceback"]), "\n"); !strings.Contains(tb, "cell line 1, column 6") {
		t.Fatalf("traceback %s", tb)
	}
	ab := tr.of(queued.Header.MsgID)
	if types(ab) != "status,execute_reply,status" || ab[1].content["status"] != "aborted" {
		t.Fatalf("queued: %s %v", types(ab), ab)
	}
	// The non-execute request is kept and served next.
	if len(k.pending) != 1 || k.pending[0] != info {
		t.Fatalf("pending %v", k.pending)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestPanicBecomesErrorReply(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "boom"})
	k.handle(wire.Shell, m)
	ss := tr.of(m.Header.MsgID)
	last, reply := ss[len(ss)-1], ss[len(ss)-2]
	if last.msgType != "status" || last.content["execution_state"] != "idle" {
		t.Fatalf("no idle after panic: %s", types(ss))
	}
	if reply.msgType != "execute_reply" || reply.content["ename"] != "InternalError" {
		t.Fatalf("reply %v", reply)
	}
}

func TestInterruptLiveQuery(t *testing.T) {
	k, tr, eng := newTestKernel()
	m := request("execute_request", map[string]any{"code": "block"})
	done := make(chan struct{})
	go func() { k.handle(wire.Shell, m); close(done) }()
	<-eng.started
	k.HandleControl(request("interrupt_request", map[string]any{}))
	<-done
	ss := tr.of(m.Header.MsgID)
	var errs, disp, clears int
	for _, s := range ss {
		switch s.msgType {
		case "error":
			errs++
			if s.content["ename"] != "Interrupted" {
				t.Fatalf("ename %v", s.content["ename"])
			}
		case "display_data":
			disp++
		case "clear_output":
			clears++
		}
	}
	if errs != 1 || disp != 1 || clears != 1 {
		t.Fatalf("errors %d displays %d clears %d: %s", errs, disp, clears, types(ss))
	}
	// What arrived before the interrupt stays readable in any frontend.
	if text, _ := finalTable(t, ss); !strings.HasSuffix(text, ", interrupted") {
		t.Fatalf("final table %q", text)
	}
}

func TestRowsBoundStopsNormally(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "-- clink: rows=5\nblock"})
	k.handle(wire.Shell, m)
	ss := tr.of(m.Header.MsgID)
	reply := ss[len(ss)-2]
	if reply.content["status"] != "ok" {
		t.Fatalf("reply %v", reply.content)
	}
	final := ss[len(ss)-3].content["data"].(map[string]any)["text/plain"].(string)
	if !strings.Contains(final, "5 rows") || !strings.Contains(final, "stopped at rows=5") {
		t.Fatalf("final snapshot %q", final)
	}
}

func TestSilentAndAck(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "ack", "silent": true})
	k.handle(wire.Shell, m)
	if got := types(tr.of(m.Header.MsgID)); got != "status,execute_reply,status" {
		t.Fatalf("silent: %s", got)
	}
	if k.count != 0 {
		t.Fatalf("silent counted")
	}
	m = request("execute_request", map[string]any{"code": "ack"})
	k.handle(wire.Shell, m)
	ss := tr.of(m.Header.MsgID)
	if ss[2].msgType != "stream" || ss[2].content["text"] != "done.\n" {
		t.Fatalf("ack %v", ss[2])
	}
}

func TestHistoryTail(t *testing.T) {
	k, tr, _ := newTestKernel()
	for _, c := range []string{"a", "b", "c"} {
		k.handle(wire.Shell, request("execute_request", map[string]any{"code": c}))
	}
	m := request("history_request", map[string]any{"hist_access_type": "tail", "n": 2, "output": false, "raw": true})
	k.handle(wire.Shell, m)
	h := tr.of(m.Header.MsgID)[1].content["history"].([]any)
	if len(h) != 2 || h[0].([]any)[2] != "b" || h[1].([]any)[1].(float64) != 3 {
		t.Fatalf("history %v", h)
	}
}

func TestControlRefusesShellState(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "hello"})
	k.HandleControl(m)
	if got := types(tr.of(m.Header.MsgID)); got != "status,status" {
		t.Fatalf("execute on control: %s", got)
	}
}

// The live display of a continuous top-n keeps its rows in rank order, not
// in the order they entered.
func TestLiveTopNInRankOrder(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "topn"})
	k.handle(wire.Shell, m)
	final, _ := finalTable(t, tr.of(m.Header.MsgID))
	b, d, c := strings.Index(final, "\nbb "), strings.Index(final, "\nddd "), strings.Index(final, "\nc ")
	if b < 0 || d < 0 || c < 0 || !(b < d && d < c) || strings.Contains(final, "\na ") {
		t.Fatalf("want bb (7), ddd (5), c (3) in that order:\n%s", final)
	}
}

// The live display of an updating result is the current table: the
// changelog applied, the row kind not shown.
func TestLiveChangelogShowsCurrentTable(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "changelog"})
	k.handle(wire.Shell, m)
	final, _ := finalTable(t, tr.of(m.Header.MsgID))
	for _, want := range []string{"a", "2", "c", "5", "\n2 rows after 6 changes, finished"} {
		if !strings.Contains(final, want) {
			t.Fatalf("final table lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "+I") || strings.Contains(final, " b ") {
		t.Fatalf("final table shows a row kind or a deleted row:\n%s", final)
	}
}

// The kernel's live table shows the shared changelog fixture's table, the
// same one the shell's table mode test reads (clinksh's
// TestTableModeMatchesSharedFixture): the same rows in the same order.
func TestLiveTableMatchesSharedFixture(t *testing.T) {
	k, tr, eng := newTestKernel()
	var want []string
	eng.fixture, want = changelogtest.ReadFixture(t, "../../../../testdata/changelog/display.txt")
	m := request("execute_request", map[string]any{"code": "changelog-fixture"})
	k.handle(wire.Shell, m)
	final, _ := finalTable(t, tr.of(m.Header.MsgID))
	lines := strings.Split(final, "\n")
	var got []string
	for _, l := range lines[2:] { // after the header and its rule
		f := strings.Split(l, " | ")
		if len(f) != 2 {
			break
		}
		got = append(got, strings.TrimSpace(f[0])+","+strings.TrimSpace(f[1]))
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("table:\n%s\nwant:\n%s", final, w)
	}
	footer := fmt.Sprintf("%d rows after %d changes, finished", len(want), len(eng.fixture))
	if !strings.Contains(final, footer) {
		t.Errorf("footer: want %q in\n%s", footer, final)
	}
}

// finalTable is the text and HTML of a live statement's final result: an
// execute_result, the last output of the request, sent after the live
// display was cleared away (clear_output, wait) so the saved cell holds the
// result alone.
func finalTable(t *testing.T, ss []sent) (text, html string) {
	t.Helper()
	var outs []sent
	for _, s := range ss {
		switch s.msgType {
		case "display_data", "update_display_data", "execute_result", "clear_output":
			outs = append(outs, s)
		}
	}
	if len(outs) < 3 || outs[0].msgType != "display_data" {
		t.Fatalf("outputs: %s", types(ss))
	}
	res := outs[len(outs)-1]
	if res.msgType != "execute_result" {
		t.Fatalf("want the result last: %s", types(ss))
	}
	first := liveStatus // the live display's first drawing, if any (after a progress display's)
	for _, s := range outs {
		if _, ok := s.content["transient"]; ok && s.msgType == "display_data" {
			d := s.content["data"].(map[string]any)
			if html, _ := d["text/html"].(string); !strings.Contains(html, "clink-progress") {
				first, _ = d["text/plain"].(string)
			}
		}
	}
	if first != liveStatus {
		t.Errorf("the live display's first drawing has text %q: jupyter console prints it, and no update after", first)
	}
	lastLive, clear := -1, -1
	for i, s := range outs {
		if _, ok := s.content["transient"]; ok {
			lastLive = i
		}
		if s.msgType == "clear_output" && s.content["wait"] == true {
			clear = i
		}
	}
	if clear < lastLive {
		t.Fatalf("the live display is not cleared away after its last drawing: %s", types(outs))
	}
	saved := checkSavedOutputs(t, ss)
	if n := len(saved); n > 0 && saved[n-1].msgType == "error" {
		saved = saved[:n-1]
	}
	if len(saved) == 0 || saved[len(saved)-1].msgType != "execute_result" {
		t.Fatalf("saved outputs %v", saved)
	}
	d := res.content["data"].(map[string]any)
	text, _ = d["text/plain"].(string)
	html, _ = d["text/html"].(string)
	if c := consoleView(ss); strings.Count(c, text) != 1 || strings.Contains(c, "waiting for rows") {
		t.Errorf("jupyter console prints:\n%s", c)
	}
	return text, html
}

// A live updating table shows at most max_rows rows (the cell's option, or
// kernel.max_rows once set; 20 otherwise), with the full counts in its
// footer; the latest changed rows are the ones shown.
func TestLiveTableCappedAtMaxRows(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "-- clink: max_rows=4\ngrow"})
	k.handle(wire.Shell, m)
	text, html := finalTable(t, tr.of(m.Header.MsgID))
	if n := strings.Count(html, "<tr>"); n != 5 { // header + 4
		t.Fatalf("%d html rows:\n%s", n, html)
	}
	if !strings.Contains(text, "30 rows after 90 changes, showing the 4 last changed") {
		t.Fatalf("footer:\n%s", text)
	}
	for _, want := range []string{"key26", "key29"} {
		if !strings.Contains(text, want) {
			t.Fatalf("latest row %s not shown:\n%s", want, text)
		}
	}
	if strings.Contains(text, "key25") || strings.Contains(text, "key00") {
		t.Fatalf("older rows shown:\n%s", text)
	}

	// The default: liveTail rows.
	m = request("execute_request", map[string]any{"code": "grow"})
	k.handle(wire.Shell, m)
	_, html = finalTable(t, tr.of(m.Header.MsgID))
	if n := strings.Count(html, "<tr>"); n != liveTail+1 {
		t.Fatalf("default cap: %d html rows", n)
	}

	// SET 'kernel.max_rows' caps live tables too, append-only ones included.
	k.handle(wire.Shell, request("execute_request", map[string]any{"code": "SET 'kernel.max_rows' = '3'"}))
	m = request("execute_request", map[string]any{"code": "-- clink: rows=10\nblock"})
	k.handle(wire.Shell, m)
	text, html = finalTable(t, tr.of(m.Header.MsgID))
	if n := strings.Count(html, "<tr>"); n != 4 || !strings.Contains(text, "10 rows, showing the last 3") {
		t.Fatalf("kernel.max_rows=3 on a live tail: %d rows\n%s", n, text)
	}
}

// Interrupting EXPLAIN ANALYZE keeps its report (what ran so far), then
// reports the interrupt.
func TestInterruptedExplainKeepsReport(t *testing.T) {
	k, tr, eng := newTestKernel()
	m := request("execute_request", map[string]any{"code": "explainblock"})
	done := make(chan struct{})
	go func() { k.handle(wire.Shell, m); close(done) }()
	<-eng.started
	k.HandleControl(request("interrupt_request", map[string]any{}))
	<-done
	ss := tr.of(m.Header.MsgID)
	if got := types(ss); got != "status,execute_input,display_data,error,execute_reply,status" {
		t.Fatalf("messages: %s", got)
	}
	if text := ss[2].content["data"].(map[string]any)["text/plain"].(string); !strings.Contains(text, "Scan bid") {
		t.Fatalf("report %q", text)
	}
	if ss[3].content["ename"] != "Interrupted" {
		t.Fatalf("error %v", ss[3].content)
	}
}

// A chart over a stream is a display redrawn while the query runs (each
// update a Vega-Lite spec of the rows so far), then cleared away, and the final
// chart is an output of its own for frontends that ignore updates.
func TestLiveChartUpdatesWhileRunning(t *testing.T) {
	k, tr, _ := newTestKernel()
	m := request("execute_request", map[string]any{"code": "-- clink: chart=point x=s y=s rows=30\nblock"})
	k.handle(wire.Shell, m)
	var outs []sent
	for _, s := range tr.of(m.Header.MsgID) {
		switch s.msgType {
		case "display_data", "update_display_data", "execute_result", "clear_output":
			outs = append(outs, s)
		}
	}
	if len(outs) < 4 || outs[0].msgType != "display_data" {
		t.Fatalf("outputs: %s", types(outs))
	}
	id := outs[0].content["transient"].(map[string]any)["display_id"]
	values := func(s sent) int {
		d := s.content["data"].(map[string]any)
		spec, ok := d["application/vnd.vegalite.v5+json"].(map[string]any)
		if !ok {
			t.Fatalf("%s without a chart: %v", s.msgType, d)
		}
		return len(spec["data"].(map[string]any)["values"].([]any))
	}
	updates := outs[1 : len(outs)-2]
	if len(updates) == 0 {
		t.Fatalf("no redraw while running: %s", types(outs))
	}
	last := 0
	for _, u := range updates {
		if u.msgType != "update_display_data" || u.content["transient"].(map[string]any)["display_id"] != id {
			t.Fatalf("not an update of the chart's display: %s", types(outs))
		}
		n := values(u)
		if n < last || n > 30 {
			t.Fatalf("redraw with %d points after %d", n, last)
		}
		last = n
	}
	clear, final := outs[len(outs)-2], outs[len(outs)-1]
	if clear.msgType != "clear_output" || clear.content["wait"] != true {
		t.Fatalf("live chart not cleared away: %s", types(outs))
	}
	if saved := checkSavedOutputs(t, tr.of(m.Header.MsgID)); len(saved) != 1 {
		t.Fatalf("saved outputs %v, want the final chart alone", saved)
	}
	if final.msgType != "display_data" || final.content["transient"] != nil || values(final) != 30 {
		t.Fatalf("final chart: %s %v", final.msgType, final.content["transient"])
	}
	if text := final.content["data"].(map[string]any)["text/plain"].(string); !strings.Contains(text, "30 rows, stopped at rows=30") {
		t.Fatalf("final text:\n%s", text)
	}
}

func (f *fakeTransport) published(text string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.out {
		if data, ok := s.content["data"].(map[string]any); ok {
			if t, _ := data["text/plain"].(string); strings.Contains(t, text) {
				return true
			}
		}
	}
	return false
}

// A long bounded statement shows the scans' progress as one display
// updated in place (its first drawing HTML only, which jupyter console does
// not print), cleared away before the result that replaces it.
func TestProgressDisplayForLongBoundedCell(t *testing.T) {
	k, tr, eng := newTestKernel()
	eng.shown = tr.published
	k.progressDelay, k.progressInterval = time.Millisecond, time.Millisecond
	m := request("execute_request", map[string]any{"code": "slowscan"})
	k.handle(wire.Shell, m)
	ss := tr.of(m.Header.MsgID)
	var id string
	var texts []string
	last := -1
	for i, s := range ss {
		if s.msgType != "display_data" && s.msgType != "update_display_data" {
			continue
		}
		tid := s.content["transient"].(map[string]any)["display_id"].(string)
		data := s.content["data"].(map[string]any)
		html, _ := data["text/html"].(string)
		if !strings.Contains(html, "<progress") {
			t.Errorf("no progress bar in %q", html)
		}
		if s.msgType == "display_data" {
			if id != "" {
				t.Fatalf("a second display: %s", types(ss))
			}
			id = tid
			if _, ok := data["text/plain"]; ok || !strings.Contains(html, "250 / 1,000 rows (25%)") {
				t.Errorf("first drawing %v", data)
			}
		} else {
			if tid != id || id == "" {
				t.Fatalf("update of display %q, progress is %q: %s", tid, id, types(ss))
			}
			texts = append(texts, data["text/plain"].(string))
		}
		last = i
	}
	if len(texts) < 1 || !strings.HasPrefix(texts[len(texts)-1], "1,000 / 1,000 rows (100%)") {
		t.Fatalf("progress texts %q: want it drawn to the end", texts)
	}
	text, _ := finalTable(t, ss)
	if !strings.HasSuffix(text, "2 rows, finished") {
		t.Fatalf("final table %q", text)
	}
	cleared := false
	for i, s := range ss {
		if s.msgType == "clear_output" && i > last {
			cleared = true
		}
		if s.msgType == "execute_result" && (i < last || !cleared) {
			t.Fatalf("result before the progress display was cleared away: %s", types(ss))
		}
	}
}

// A statement that ends before the delay shows no progress at all.
func TestNoProgressForFastCell(t *testing.T) {
	k, tr, _ := newTestKernel()
	k.progressDelay = time.Hour
	m := request("execute_request", map[string]any{"code": "fast"})
	k.handle(wire.Shell, m)
	if got := types(tr.of(m.Header.MsgID)); got != "status,execute_input,execute_result,execute_reply,status" {
		t.Fatalf("messages %s", got)
	}
}

// A stream's live table takes over the progress display's slot: one
// display, drawn as progress, then updated into the live table (never as
// progress again), cleared away once at the end.
func TestLiveTableEndsProgress(t *testing.T) {
	k, tr, eng := newTestKernel()
	eng.shown = tr.published
	k.progressDelay, k.progressInterval = time.Millisecond, time.Millisecond
	m := request("execute_request", map[string]any{"code": "slowstream"})
	k.handle(wire.Shell, m)
	ss := tr.of(m.Header.MsgID)
	var ids []string
	clears := 0
	live := false // the live table has been drawn
	for _, s := range ss {
		if s.msgType == "clear_output" {
			clears++
		}
		tr, ok := s.content["transient"].(map[string]any)
		if !ok {
			continue
		}
		if s.msgType == "display_data" {
			ids = append(ids, tr["display_id"].(string))
		}
		html, _ := s.content["data"].(map[string]any)["text/html"].(string)
		switch {
		case strings.Contains(html, "clink-result"):
			live = true
		case strings.Contains(html, "clink-progress") && live:
			t.Fatalf("progress drawn after the live table started: %s", types(ss))
		}
	}
	if len(ids) != 1 || !live || clears != 1 {
		t.Fatalf("want one display (progress, then the live table), cleared once: %s", types(ss))
	}
	if text, _ := finalTable(t, ss); !strings.HasSuffix(text, "1 row, finished") {
		t.Fatalf("final result %q: %s", text, types(ss))
	}
}

// Issue 20: a cell that drew a progress display or a live table is saved
// with what a reader needs only: its outputs as a notebook (nbclient,
// JupyterLab) keeps them hold no emptied or running display, earlier
// outputs of the cell stay, in order; jupyter console prints the final
// table once and no transient drawing.
func TestSavedCellsHoldOnlyResults(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string // the saved outputs: their text, in order
	}{
		{"slowscan", []string{"2 rows, finished"}},
		{"slowstream", []string{"1 row, finished"}},
		{"ack;\nslowscan", []string{"done.", "2 rows, finished"}},
		{"ack;\nslowstream;\nack", []string{"done.", "1 row, finished", "done."}},
		{"fast;\nslowquiet", []string{"<fast>"}},
		{"slowquiet", nil},
	} {
		k, tr, eng := newTestKernel()
		eng.shown = tr.published
		k.progressDelay, k.progressInterval = time.Millisecond, time.Millisecond
		m := request("execute_request", map[string]any{"code": c.code})
		k.handle(wire.Shell, m)
		ss := tr.of(m.Header.MsgID)
		saved := checkSavedOutputs(t, ss)
		var got []string
		for _, o := range saved {
			text := o.text
			if o.data != nil {
				text, _ = o.data["text/plain"].(string)
			}
			got = append(got, text)
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: saved %q, want %q: %s", c.code, got, c.want, types(ss))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%q: saved output %d is %q, want %q", c.code, i, got[i], c.want[i])
			}
		}
		console := consoleView(ss)
		if strings.Contains(console, "rows read") || strings.Contains(console, "rows (") || strings.Contains(console, "waiting") {
			t.Errorf("%q: jupyter console prints a transient drawing:\n%s", c.code, console)
		}
		// A single statement's result prints once. (An earlier output
		// of the same cell is printed again by jupyter console when a
		// later statement's transient display is cleared away: the
		// protocol clears a cell's outputs only all at once, and the
		// console, which ignores clear_output, prints the ones sent again.)
		if !strings.Contains(c.code, ";") && len(c.want) == 1 && strings.Count(console, c.want[0]) != 1 {
			t.Errorf("%q: jupyter console prints:\n%s", c.code, console)
		}
	}
}
