// Command clink-kernel is clink's Jupyter kernel.
//
//	clink-kernel install [--user | --sys-prefix | --prefix P] [--name N]
//	clink-kernel uninstall [--user | --sys-prefix | --prefix P] [--name N]
//	clink-kernel [-f] <connection_file>
//
// The wire protocol (sockets, signatures, framing) is internal/wire; the
// request handling and rendering is internal/dispatch; this file wires them
// to an engine session and to process signals.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/clink-sql/clink/cmd/clink-kernel/internal/dispatch"
	"github.com/clink-sql/clink/cmd/clink-kernel/internal/wire"
	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/engine"
	"github.com/clink-sql/clink/plan"
)

const usage = `usage:
  clink-kernel install   [--user | --sys-prefix | --prefix P] [--name N]
  clink-kernel uninstall [--user | --sys-prefix | --prefix P] [--name N]
  clink-kernel [-f] <connection_file>
`

func main() {
	engine.TuneRuntime()
	args := os.Args[1:]
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch args[0] {
	case "install":
		err = install(args[1:], os.Stdout)
	case "uninstall":
		err = uninstall(args[1:], os.Stdout)
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	case "-f", "--connection-file":
		if len(args) < 2 {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		err = run(args[1])
	default:
		err = run(args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clink-kernel:", err)
		os.Exit(1)
	}
}

// session adapts the engine session for the dispatcher: its Tables fills in
// the schemas of tables the catalog resolves lazily (the demo tables), so
// completion and inspection can list their columns.
type session struct{ *engine.Session }

func (s session) Tables() []engine.TableInfo {
	ts := s.Session.Tables()
	for i, t := range ts {
		if t.Schema != nil || t.Kind != "table" {
			continue
		}
		if e, ok := s.Catalog().Lookup(t.Name); ok {
			if tbl, err := e.Resolve(); err == nil {
				ts[i].Schema, ts[i].Bounded = tbl.Schema(), tbl.Bounded()
			}
		}
	}
	return ts
}

// ColumnStats is what a file-backed table's metadata (Parquet footers)
// tells of column col, for inspection: its rows and value range. Tables
// without such metadata (streams, views) report nothing. A table of Kind
// "file" is a quoted path of FROM, opened as the binder opens it.
func (s session) ColumnStats(t engine.TableInfo, col int) (dispatch.ColumnStats, bool) {
	var tbl connectors.Table
	if t.Kind == "file" {
		var err error
		if tbl, _, err = plan.OpenPath(t.Name, ""); err != nil {
			return dispatch.ColumnStats{}, false
		}
	} else {
		e, ok := s.Catalog().Lookup(t.Name)
		if !ok || e.IsView() {
			return dispatch.ColumnStats{}, false
		}
		var err error
		if tbl, err = e.Resolve(); err != nil {
			return dispatch.ColumnStats{}, false
		}
	}
	counted, ok := tbl.(interface{ NumRows() int64 })
	if !ok {
		return dispatch.ColumnStats{}, false
	}
	st := dispatch.ColumnStats{Rows: counted.NumRows()}
	if r, ok := tbl.(interface {
		ColumnRange(col int) (lo, hi any, ok bool)
	}); ok {
		st.Min, st.Max, st.HasRange = r.ColumnRange(col)
	}
	return st, true
}

// FileTable opens a quoted path of FROM ('data/*.parquet') for inspection:
// its schema, from the files' metadata.
func (s session) FileTable(path string) (engine.TableInfo, bool) {
	tbl, format, err := plan.OpenPath(path, "")
	if err != nil {
		return engine.TableInfo{}, false
	}
	return engine.TableInfo{Name: path, Kind: "file", Connector: format, Schema: tbl.Schema(), Bounded: tbl.Bounded()}, true
}

func run(connFile string) error {
	logger := log.New(os.Stderr, "clink-kernel: ", log.LstdFlags)
	ci, err := wire.ReadConnectionFile(connFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := wire.Listen(ctx, ci, logger)
	if err != nil {
		return err
	}
	defer srv.Close()

	sess := engine.NewSession(engine.SessionOptions{})
	defer sess.Close()
	k := dispatch.New(session{sess}, srv, logger)

	go srv.Heartbeat(ctx)
	go srv.Receive(ctx, wire.Control, k.HandleControl)
	go srv.Receive(ctx, wire.Shell, k.EnqueueShell)
	// stdin is bound so clients can connect; the kernel never asks for
	// input, so anything arriving there is read and dropped.
	go srv.Receive(ctx, wire.Stdin, func(m *wire.Message) {
		logger.Printf("stdin: unexpected %s ignored", m.Type())
	})

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			if s == os.Interrupt {
				// Jupyter's signal interrupt mode: cancel the query, not us.
				k.Interrupt()
				continue
			}
			k.Shutdown(false)
		}
	}()

	go watchParent(ctx, os.Getenv("JPY_PARENT_PID"), parentPoll, func(reason string) {
		logger.Printf("%s: shutting down", reason)
		k.Shutdown(false)
	})

	logger.Printf("listening (%s %s, shell %d, iopub %d, hb %d)", ci.Transport, ci.IP, ci.ShellPort, ci.IOPubPort, ci.HBPort)
	go k.Serve(ctx)
	<-k.Done()
	// Close the sockets before exiting so a restarting client can bind a
	// new kernel to the same ports at once.
	signal.Stop(sigs)
	cancel()
	if err := srv.Close(); err != nil {
		logger.Printf("closing sockets: %v", err)
	}
	logger.Printf("shut down (restart=%v)", k.Restart())
	return nil
}
