package engine

import (
	"context"
	"strings"
	"testing"
)

// SET 'table.exec.state.ttl' reaches a regular streaming join (EXPLAIN
// says how long its rows live) but not a time-bounded one, whose state
// expires with the watermark; a bad value is refused at SET.
func TestStateTTLSetting(t *testing.T) {
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	ctx := context.Background()
	for _, st := range []string{
		"CREATE TABLE p WITH ('connector' = 'nexmark', 'table' = 'person')",
		"CREATE TABLE a WITH ('connector' = 'nexmark', 'table' = 'auction')",
		"SET 'table.exec.state.ttl' = '90 min'",
	} {
		if _, err := s.Execute(ctx, st, nil, ExecOptions{}); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	o, err := s.Execute(ctx, "EXPLAIN SELECT p.name, a.id FROM p JOIN a ON p.id = a.seller", nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.Text, "state: rows expire 1h30m0s after they arrive (table.exec.state.ttl)") {
		t.Errorf("regular join without the TTL in EXPLAIN:\n%s", o.Text)
	}
	if _, err := s.Execute(ctx, "SET 'table.exec.state.ttl' = '0'", nil, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err = s.Execute(ctx, "EXPLAIN SELECT p.name, a.id FROM p JOIN a ON p.id = a.seller", nil, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.Text, "state: unbounded") {
		t.Errorf("TTL 0 should keep state forever:\n%s", o.Text)
	}
	_, err = s.Execute(ctx, "SET 'table.exec.state.ttl' = 'a while'", nil, ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "want a duration") {
		t.Errorf("bad TTL: %v", err)
	}
}
