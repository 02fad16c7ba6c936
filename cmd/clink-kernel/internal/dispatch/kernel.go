// Package dispatch is the kernel's request handling: it runs the SQL of
// execute requests through the engine, renders results as Jupyter display
// data, and answers completion, inspection, history and control requests.
// The wire package below it owns sockets and signatures.
package dispatch

import (
	"context"
	"fmt"
	"log"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/engine"
)

// Engine is what the kernel needs from a clink session.
type Engine interface {
	Execute(ctx context.Context, stmt string, w engine.ResultWriter, opts engine.ExecOptions) (engine.Outcome, error)
	// Tables lists the catalog with schemas, for completion and inspection.
	Tables() []engine.TableInfo
}

// Transport sends replies and iopub messages (wire.Server in the binary).
type Transport interface {
	Reply(ch wire.Channel, req *wire.Message, msgType string, content any) error
	Publish(parent *wire.Message, msgType string, content any) error
}

// Version is reported in kernel_info_reply.
var Version = "0.1.0"

// DefaultMaxRows caps the rows a bounded result table shows.
const DefaultMaxRows = 1000

// Kernel handles requests. Shell requests are processed one at a time, in
// order, by Serve; control requests are handled on the caller's goroutine
// (the control socket's reader) so an interrupt or a shutdown is never stuck
// behind a running query.
type Kernel struct {
	eng Engine
	tr  Transport
	log *log.Logger

	shell   chan *wire.Message
	pending []*wire.Message // put back by the abort drain, served first

	// Fields below are touched only by the Serve goroutine.
	count   int
	history []historyEntry
	maxRows int
	// maxRowsSet: SET 'kernel.max_rows' was run, so it caps live tables
	// too (they show liveTail rows otherwise, a size to watch updating).
	maxRowsSet bool

	mu      sync.Mutex
	running context.CancelCauseFunc // cancels the running cell

	done     chan struct{}
	doneOnce sync.Once
	restart  bool

	// liveInterval is the minimum time between two live display updates.
	liveInterval time.Duration
	// progressDelay and progressInterval time a bounded statement's
	// progress display: first shown after the delay, then redrawn.
	progressDelay, progressInterval time.Duration
	// abortGrace is how long after a failed cell requests still in flight
	// are waited for, to be aborted too.
	abortGrace time.Duration
}

// New returns a kernel over eng that answers through tr.
func New(eng Engine, tr Transport, logger *log.Logger) *Kernel {
	return &Kernel{
		eng:          eng,
		tr:           tr,
		log:          logger,
		shell:        make(chan *wire.Message, 1024),
		maxRows:      DefaultMaxRows,
		done:         make(chan struct{}),
		liveInterval: 200 * time.Millisecond,
		abortGrace:   50 * time.Millisecond,

		progressDelay:    progressDelay,
		progressInterval: progressInterval,
	}
}

// Done is closed when a shutdown was requested.
func (k *Kernel) Done() <-chan struct{} { return k.done }

// Restart reports whether the shutdown asked for a restart.
func (k *Kernel) Restart() bool { return k.restart }

// EnqueueShell queues a shell request for Serve.
func (k *Kernel) EnqueueShell(m *wire.Message) {
	select {
	case k.shell <- m:
	case <-k.done:
	}
}

// Serve processes shell requests until ctx ends or a shutdown is requested.
func (k *Kernel) Serve(ctx context.Context) {
	for {
		var m *wire.Message
		if len(k.pending) > 0 {
			m, k.pending = k.pending[0], k.pending[1:]
		} else {
			select {
			case m = <-k.shell:
			case <-ctx.Done():
				return
			case <-k.done:
				return
			}
		}
		k.handle(wire.Shell, m)
	}
}

// HandleControl handles one control request, synchronously.
func (k *Kernel) HandleControl(m *wire.Message) { k.handle(wire.Control, m) }

// Interrupt cancels the running cell, if any (interrupt_request, SIGINT).
func (k *Kernel) Interrupt() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.running != nil {
		k.running(errInterrupted)
	}
}

// Shutdown stops the running cell and ends Serve.
func (k *Kernel) Shutdown(restart bool) {
	k.doneOnce.Do(func() {
		k.restart = restart
		k.Interrupt()
		close(k.done)
	})
}

// controlTypes are the requests the control channel serves.
var controlTypes = map[string]bool{
	"kernel_info_request": true, "interrupt_request": true, "shutdown_request": true,
	"comm_info_request": true, "is_complete_request": true,
}

func replyType(reqType string) string {
	return strings.TrimSuffix(reqType, "_request") + "_reply"
}

// handle runs one request between busy and idle, turning a panic into an
// error reply so no request can take the kernel down.
func (k *Kernel) handle(ch wire.Channel, m *wire.Message) {
	k.publish(m, "status", map[string]string{"execution_state": "busy"})
	defer k.publish(m, "status", map[string]string{"execution_state": "idle"})
	defer func() {
		if r := recover(); r != nil {
			// The stack goes to the kernel's log; the notebook gets a
			// short message, not Go internals.
			k.log.Printf("%s: panic handling %s: %v\n%s", ch, m.Type(), r, debug.Stack())
			if strings.HasSuffix(m.Type(), "_request") {
				msg := fmt.Sprintf("internal error: %v (details in the kernel log)", r)
				content := map[string]any{
					"status": "error", "ename": "InternalError", "evalue": msg,
					"traceback": []string{"InternalError: " + msg},
				}
				if ch == wire.Shell {
					content["execution_count"] = k.count
				}
				k.reply(ch, m, content)
			}
		}
	}()
	if ch == wire.Control && !controlTypes[m.Type()] {
		// The shell's state (history, execution count) belongs to the
		// shell goroutine; control answers only what is safe beside it.
		k.log.Printf("control: %s is served on shell only; ignored", m.Type())
		return
	}
	switch m.Type() {
	case "kernel_info_request":
		k.reply(ch, m, kernelInfo())
	case "execute_request":
		k.execute(m)
	case "complete_request":
		k.complete(ch, m)
	case "inspect_request":
		k.inspect(ch, m)
	case "is_complete_request":
		k.isComplete(ch, m)
	case "history_request":
		k.historyRequest(ch, m)
	case "comm_info_request":
		k.reply(ch, m, map[string]any{"status": "ok", "comms": map[string]any{}})
	case "comm_open":
		// No comm targets: close it at once, as the protocol asks.
		var c struct {
			CommID string `json:"comm_id"`
		}
		_ = m.DecodeContent(&c)
		k.publish(m, "comm_close", map[string]any{"comm_id": c.CommID, "data": map[string]any{}})
	case "comm_msg", "comm_close":
		// No comms are ever open; nothing to do.
	case "interrupt_request":
		k.Interrupt()
		k.reply(ch, m, map[string]any{"status": "ok"})
	case "shutdown_request":
		var c struct {
			Restart bool `json:"restart"`
		}
		_ = m.DecodeContent(&c)
		content := map[string]any{"status": "ok", "restart": c.Restart}
		k.reply(ch, m, content)
		k.publish(m, "shutdown_reply", content)
		k.Shutdown(c.Restart)
	default:
		k.log.Printf("%s: unsupported message type %q ignored", ch, m.Type())
	}
}

func (k *Kernel) reply(ch wire.Channel, req *wire.Message, content any) {
	if err := k.tr.Reply(ch, req, replyType(req.Type()), content); err != nil {
		k.log.Printf("%s: reply to %s: %v", ch, req.Type(), err)
	}
}

func (k *Kernel) publish(parent *wire.Message, msgType string, content any) {
	if err := k.tr.Publish(parent, msgType, content); err != nil {
		k.log.Printf("iopub: %s: %v", msgType, err)
	}
}

func kernelInfo() map[string]any {
	return map[string]any{
		"status":                 "ok",
		"protocol_version":       wire.ProtocolVersion,
		"implementation":         "clink",
		"implementation_version": Version,
		"banner":                 "clink " + Version + ": streaming SQL over Parquet and Kafka (Arrow-native)\nStatements end with ';'. First-line options: -- clink: duration=5s rows=100 chart=line x=col y=col",
		"debugger":               false,
		"help_links": []map[string]string{
			{"text": "clink", "url": "https://github.com/clink-sql/clink"},
		},
		"language_info": map[string]any{
			"name":            "sql",
			"version":         Version,
			"mimetype":        "text/x-sql",
			"file_extension":  ".sql",
			"codemirror_mode": "sql",
			"pygments_lexer":  "sql",
		},
	}
}
