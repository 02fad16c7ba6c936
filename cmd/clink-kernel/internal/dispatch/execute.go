package dispatch

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/sql"
)

// Causes a cell's context is cancelled with. A bound is a normal end; an
// interrupt is reported as the error "Interrupted".
var (
	errInterrupted = errors.New("interrupted")
	errBound       = errors.New("cell bound reached")
)

type executeRequest struct {
	Code         string `json:"code"`
	Silent       bool   `json:"silent"`
	StoreHistory *bool  `json:"store_history"`
	StopOnError  *bool  `json:"stop_on_error"`
}

// cellError is a failed cell as the protocol reports it.
type cellError struct {
	ename, evalue string
	traceback     []string
}

func (e *cellError) content() map[string]any {
	return map[string]any{"ename": e.ename, "evalue": e.evalue, "traceback": e.traceback}
}

func (k *Kernel) execute(m *wire.Message) {
	var req executeRequest
	if err := m.DecodeContent(&req); err != nil {
		k.reply(wire.Shell, m, map[string]any{"status": "error", "ename": "BadRequest",
			"evalue": err.Error(), "traceback": []string{}, "execution_count": k.count})
		return
	}
	store := (req.StoreHistory == nil || *req.StoreHistory) && !req.Silent
	stopOnError := req.StopOnError == nil || *req.StopOnError
	if store {
		k.count++
	}
	count := k.count
	if !req.Silent {
		k.publish(m, "execute_input", map[string]any{"code": req.Code, "execution_count": count})
	}
	if page, ok := k.help(req.Code); ok {
		// `?name` (IPython's convention): the table's columns or the
		// function's signatures, in the notebook's pager.
		if store {
			k.history = append(k.history, historyEntry{line: count, input: req.Code})
		}
		k.reply(wire.Shell, m, map[string]any{"status": "ok", "execution_count": count,
			"payload":          []any{map[string]any{"source": "page", "data": page, "start": 0}},
			"user_expressions": map[string]any{}})
		return
	}
	out := &cellOutput{k: k, parent: m, silent: req.Silent, count: count}
	cerr := k.runCell(m, req.Code, out)
	if cerr == nil {
		out.settle() // an error output would end a pending clear itself
	}
	if store {
		k.history = append(k.history, historyEntry{line: count, input: req.Code, output: out.lastText})
	}
	if cerr == nil {
		k.reply(wire.Shell, m, map[string]any{"status": "ok", "execution_count": count,
			"payload": []any{}, "user_expressions": map[string]any{}})
		return
	}
	failed := time.Now()
	content := cerr.content()
	if !req.Silent {
		k.publish(m, "error", content)
	}
	content["status"] = "error"
	content["execution_count"] = count
	k.reply(wire.Shell, m, content)
	if stopOnError {
		k.abortQueued(failed)
	}
}

// abortQueued answers "aborted" to every execute_request that arrived
// before the failed cell ended: the user queued them expecting it to work.
// Other requests, and anything that arrived later, are served as usual.
func (k *Kernel) abortQueued(failed time.Time) {
	var keep []*wire.Message
	grace := time.NewTimer(k.abortGrace)
	defer grace.Stop()
	take := func(m *wire.Message) bool { // false once past the failure
		if m.Received.After(failed) {
			keep = append(keep, m)
			return false
		}
		if m.Type() != "execute_request" {
			keep = append(keep, m)
			return true
		}
		k.publish(m, "status", map[string]string{"execution_state": "busy"})
		k.reply(wire.Shell, m, map[string]any{"status": "aborted", "execution_count": k.count})
		k.publish(m, "status", map[string]string{"execution_state": "idle"})
		return true
	}
	for _, m := range k.pending {
		take(m)
	}
	k.pending = nil
loop:
	for {
		select {
		case m := <-k.shell:
			if !take(m) {
				break loop
			}
		case <-grace.C:
			break loop
		}
	}
	k.pending = keep
}

// runCell runs the statements of one cell in order, stopping at the first
// error. Outputs go to out as each statement finishes (or live, while an
// unbounded query runs).
func (k *Kernel) runCell(m *wire.Message, code string, out *cellOutput) *cellError {
	opts, err := parseOptions(code)
	if err != nil {
		return optionError(err)
	}
	out.opts = opts
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	k.mu.Lock()
	k.running = cancel
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.running = nil
		k.mu.Unlock()
	}()
	select {
	case <-k.done: // shut down while queued
		return interrupted(0)
	default:
	}
	if opts.duration > 0 {
		t := time.AfterFunc(opts.duration, func() { cancel(errBound) })
		defer t.Stop()
	}
	pieces := sql.Split(code)
	for i, p := range pieces {
		if msg, ok, err := k.kernelStatement(p.Text); ok {
			if err != nil {
				return positionedError(code, p, err)
			}
			out.stdout(msg)
			continue
		}
		w := out.newResult()
		prog := &exec.Progress{}
		w.progress = startProgress(out, prog, k.progressDelay, k.progressInterval)
		o, err := k.eng.Execute(ctx, p.Text, w, engine.ExecOptions{Progress: prog})
		w.progress.halt() // before the result, which replaces it
		cause := context.Cause(ctx)
		switch {
		case errors.Is(cause, errInterrupted):
			w.finish("interrupted")
			if err == nil {
				// What the statement reported though stopped: an EXPLAIN
				// ANALYZE's report of what ran, as the shell keeps it.
				out.outcome(o)
			}
			return interrupted(w.total)
		case errors.Is(cause, errBound):
			// The cell's bound ends it normally, with what arrived so far,
			// even when the engine reports the cancellation as an error.
			if ferr := w.finish("stopped at duration=" + opts.duration.String()); ferr != nil {
				return optionError(ferr)
			}
			out.outcome(o)
			if rest := len(pieces) - i - 1; rest > 0 {
				out.stderr(fmt.Sprintf("warning: duration=%s reached; %d later statement(s) of this cell not run", opts.duration, rest))
			}
			return nil
		case err != nil:
			w.finish("failed")
			return positionedError(code, p, err)
		}
		if ferr := w.finish(""); ferr != nil {
			return optionError(ferr)
		}
		out.outcome(o)
	}
	return nil
}

func optionError(err error) *cellError {
	return &cellError{ename: "OptionError", evalue: err.Error(), traceback: []string{"OptionError: " + err.Error()}}
}

func interrupted(rows int64) *cellError {
	msg := "query interrupted after " + rowCount(rows)
	return &cellError{ename: "Interrupted", evalue: msg, traceback: []string{"Interrupted: " + msg}}
}

// positionedError reports err with its position in the cell, when known,
// and the cell line it points at with a caret under the column.
func positionedError(cell string, p sql.Piece, err error) *cellError {
	ce := &cellError{ename: "ExecutionError", evalue: err.Error()}
	var se *sql.Error
	if !errors.As(err, &se) {
		ce.traceback = []string{ce.ename + ": " + ce.evalue}
		return ce
	}
	ce.ename, ce.evalue = "SQLError", se.Msg
	if se.Line <= 0 {
		ce.traceback = []string{ce.ename + ": " + ce.evalue}
		return ce
	}
	line := p.Line + se.Line - 1
	col := se.Column
	if se.Line == 1 {
		col += p.Offset - (strings.LastIndex(cell[:p.Offset], "\n") + 1)
	}
	ce.traceback = []string{fmt.Sprintf("SQLError: %s", se.Msg), fmt.Sprintf("  at cell line %d, column %d:", line, col)}
	lines := strings.Split(cell, "\n")
	if line-1 < len(lines) {
		src := strings.TrimRight(lines[line-1], "\r")
		caret := col - 1
		if caret < 0 {
			caret = 0
		}
		if caret > len(src) {
			caret = len(src)
		}
		// Tabs keep their width so the caret lines up.
		pad := strings.Map(func(r rune) rune {
			if r == '\t' {
				return '\t'
			}
			return ' '
		}, src[:caret])
		ce.traceback = append(ce.traceback, "    "+src, "    "+pad+"^")
	}
	return ce
}

var setMaxRows = regexp.MustCompile(`(?is)^SET\s+'?kernel\.max_rows'?\s*=\s*'?([^';\s]*)'?\s*$`)

// kernelStatement handles the settings that belong to the kernel, not the
// engine: SET 'kernel.max_rows' = 'N' (rows shown in a result table).
func (k *Kernel) kernelStatement(text string) (string, bool, error) {
	mm := setMaxRows.FindStringSubmatch(text)
	if mm == nil {
		return "", false, nil
	}
	n, err := strconv.Atoi(mm[1])
	if err != nil || n <= 0 {
		return "", true, &sql.Error{Msg: fmt.Sprintf("kernel.max_rows must be a positive integer, got '%s'", mm[1])}
	}
	k.maxRows, k.maxRowsSet = n, true
	return fmt.Sprintf("SET 'kernel.max_rows' = '%d'", n), true, nil
}

type historyEntry struct {
	line   int
	input  string
	output *string
}

type historyRequest struct {
	Output         bool   `json:"output"`
	HistAccessType string `json:"hist_access_type"`
	N              int    `json:"n"`
	Start          int    `json:"start"`
	Stop           int    `json:"stop"`
	Pattern        string `json:"pattern"`
	Unique         bool   `json:"unique"`
}

// historySession is the session number of this kernel's history: there is
// one session, kept in memory.
const historySession = 1

// historyRequest answers "tail" (the last n inputs), "range" (lines start
// to stop of this session) and "search" (inputs matching a glob, the last n).
func (k *Kernel) historyRequest(ch wire.Channel, m *wire.Message) {
	var req historyRequest
	_ = m.DecodeContent(&req)
	var sel []historyEntry
	switch req.HistAccessType {
	case "tail":
		sel = k.history
	case "range":
		for _, h := range k.history {
			if h.line >= req.Start && (req.Stop <= 0 || h.line < req.Stop) {
				sel = append(sel, h)
			}
		}
	case "search":
		re := globRegexp(req.Pattern)
		seen := map[string]bool{}
		for i := len(k.history) - 1; i >= 0; i-- {
			h := k.history[i]
			if !re.MatchString(h.input) || (req.Unique && seen[h.input]) {
				continue
			}
			seen[h.input] = true
			sel = append([]historyEntry{h}, sel...)
		}
	}
	if req.HistAccessType != "range" && req.N > 0 && len(sel) > req.N {
		sel = sel[len(sel)-req.N:]
	}
	hist := []any{}
	for _, h := range sel {
		if req.Output {
			hist = append(hist, []any{historySession, h.line, []any{h.input, h.output}})
		} else {
			hist = append(hist, []any{historySession, h.line, h.input})
		}
	}
	k.reply(ch, m, map[string]any{"status": "ok", "history": hist})
}

// globRegexp turns a history search pattern (a glob: * and ?) into a
// regexp over the whole input.
func globRegexp(glob string) *regexp.Regexp {
	var sb strings.Builder
	sb.WriteString("(?s)^")
	for _, r := range glob {
		switch r {
		case '*':
			sb.WriteString(".*")
		case '?':
			sb.WriteString(".")
		default:
			sb.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	sb.WriteString("$")
	return regexp.MustCompile(sb.String())
}

// help answers a cell that is only `?name` or `name?` with what inspect
// would show for name; a name nothing knows pages a short notice.
func (k *Kernel) help(code string) (map[string]any, bool) {
	c := strings.TrimSpace(code)
	var name string
	switch {
	case strings.HasPrefix(c, "?"):
		name = strings.TrimSpace(strings.TrimPrefix(c, "?"))
	case strings.HasSuffix(c, "?") && !strings.ContainsAny(c, " \t\n;'"):
		name = strings.TrimSuffix(c, "?")
	default:
		return nil, false
	}
	if name == "" || strings.ContainsAny(name, " \t\n;") {
		return nil, false
	}
	if data, found := k.inspectCode(name, -1); found {
		return data, true
	}
	return map[string]any{"text/plain": fmt.Sprintf("no table, view or function named %q", name)}, true
}
