package exec

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"2gb": 2 << 30, "512 MB": 512 << 20, "1.5g": 3 << 29, "100k": 100 << 10, "4096": 4096, "1TiB": 1 << 40, " 7 b ": 7,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "12 parsecs", "-1gb", "gb", "1e400"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	if got := FormatBytes(2 << 30); got != "2.0 GB" {
		t.Errorf("FormatBytes(2 GiB) = %q", got)
	}
}

// TestReservation: chunked growth within the limit, a refusal that names
// the operator and the limit and leaves the reservation as it was, the
// floor granted past the limit, Force, and Release returning everything.
func TestReservation(t *testing.T) {
	b := NewMemoryBudget(64<<20, "")
	a := b.Reserve("GROUP BY")
	if err := a.Resize(100); err != nil {
		t.Fatal(err)
	}
	if a.Held() != b.chunk() || b.Used() != b.chunk() {
		t.Errorf("a small need took %d (budget %d), want one chunk %d", a.Held(), b.Used(), b.chunk())
	}
	if err := a.Resize(60 << 20); err != nil {
		t.Fatal(err)
	}
	held := a.Held()
	err := a.Resize(65 << 20)
	var lim *MemoryLimitError
	if !errors.As(err, &lim) || lim.Op != "GROUP BY" || !strings.Contains(err.Error(), "memory limit of 64.0 MB (execution.memory-limit)") {
		t.Fatalf("over the limit: %v", err)
	}
	if a.Held() != held {
		t.Errorf("a refusal changed the reservation: %d -> %d", held, a.Held())
	}
	// Another operator still gets its floor while a holds the budget.
	o := b.Reserve("aggregate")
	if err := o.Resize(b.floor()); err != nil {
		t.Errorf("the floor was refused: %v", err)
	}
	if err := o.Resize(b.floor() + b.chunk()); err == nil {
		t.Error("more than the floor granted past the limit")
	}
	a.Force(70 << 20)
	if a.Held() != 70<<20 {
		t.Errorf("Force held %d", a.Held())
	}
	a.Release()
	o.Release()
	if b.Used() != 0 {
		t.Errorf("%d bytes used after every release", b.Used())
	}
	if b.Peak() < 70<<20 {
		t.Errorf("peak %d", b.Peak())
	}
	var none *MemoryBudget
	if r := none.Reserve("x"); r.Resize(1<<62) != nil || r.Held() != 0 {
		t.Error("a nil budget refused")
	}
	if MemoryBudgetFrom(context.Background()) != nil || MemoryBudgetFrom(WithMemoryBudget(context.Background(), b)) != b {
		t.Error("the budget does not travel in the context")
	}
}

// TestReservationsConcurrent: reservations of parallel subtasks share the
// budget's counter (run under -race) and never hold more than the limit
// plus their floors.
func TestReservationsConcurrent(t *testing.T) {
	b := NewMemoryBudget(256<<20, "")
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := b.Reserve("ORDER BY")
			defer r.Release()
			for i := int64(1); i <= 1000; i++ {
				if err := r.Resize(i << 16); err != nil {
					r.Release()
				}
			}
		}()
	}
	wg.Wait()
	if b.Used() != 0 {
		t.Errorf("%d bytes used after every release", b.Used())
	}
	if b.Peak() > b.Limit()+8*b.floor() {
		t.Errorf("peak %d over the limit %d and the floors", b.Peak(), b.Limit())
	}
}
