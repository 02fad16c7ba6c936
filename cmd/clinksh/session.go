package main

import "github.com/clink-sql/clink/engine"

// session is the executor the binary runs: the engine's session.
type session interface {
	executor
	Close() error
}

// openSession opens the engine. It starts nothing: the engine opens
// connectors only when a statement uses them, so `clinksh -c "SELECT 1"`
// stays fast.
func openSession() session {
	return engine.NewSession(engine.SessionOptions{})
}
