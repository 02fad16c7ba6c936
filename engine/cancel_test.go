package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

type countingWriter struct {
	rows    int64
	batches chan struct{}
}

func (w *countingWriter) Columns(*arrow.Schema, bool) error { return nil }
func (w *countingWriter) Batch(b *exec.Batch) error {
	w.rows += int64(b.Len())
	select {
	case w.batches <- struct{}{}:
	default:
	}
	return nil
}

// An unbounded query runs until its context is cancelled, then stops
// promptly and releases every Arrow buffer it held.
func TestCancelUnboundedQuery(t *testing.T) {
	for _, q := range []string{
		"SELECT auction, price FROM bids WHERE price > 10",
		"SELECT b.auction, b.price FROM bids b JOIN bids c ON b.auction = c.auction",
		"SELECT channel, COUNT(*) FROM bids GROUP BY channel",
	} {
		t.Run(q, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
			if _, err := s.Execute(context.Background(),
				"CREATE TABLE bids WITH ('connector' = 'nexmark', 'table' = 'bid', 'first-event.rate' = '50000', 'next-event.rate' = '50000')", nil, ExecOptions{}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			w := &countingWriter{batches: make(chan struct{}, 1)}
			done := make(chan error, 1)
			go func() {
				_, err := s.Execute(ctx, q, w, ExecOptions{})
				done <- err
			}()
			// Let it run a little: a streaming query must not have ended.
			select {
			case err := <-done:
				t.Fatalf("unbounded query ended by itself: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("want context.Canceled, got %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("query did not stop after cancel")
			}
		})
	}
}

// LIMIT over an unbounded source ends the query by itself.
func TestLimitEndsUnboundedQuery(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Mem: mem})
	w := &countingWriter{batches: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Execute(ctx, "SELECT auction, price FROM bid LIMIT 7", w, ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.rows != 7 {
		t.Fatalf("got %d rows, want 7", w.rows)
	}
}
