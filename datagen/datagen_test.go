package datagen

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func TestRandRanges(t *testing.T) {
	r := NewRand(1, 2, 3)
	counts := make([]int, 7)
	const n = 70_000
	for range n {
		v := r.Range(1, 7)
		if v < 1 || v > 7 {
			t.Fatalf("Range(1, 7) gave %d", v)
		}
		counts[v-1]++
		if f := r.Float64(); f < 0 || f >= 1 {
			t.Fatalf("Float64 gave %v", f)
		}
	}
	for i, c := range counts {
		if math.Abs(float64(c)-n/7) > 5*math.Sqrt(n/7) {
			t.Errorf("value %d drawn %d times of %d: not uniform", i+1, c, n)
		}
	}
	// Streams are keyed: the same key repeats, another key differs.
	a, b, c, d := NewRand(1, 2, 3), NewRand(1, 2, 3), NewRand(1, 2, 4), NewRand(1, 2, 3)
	if a.Uint64() != b.Uint64() || d.Uint64() == c.Uint64() {
		t.Error("NewRand is not a function of (seed, stream, index)")
	}
}

func TestWeighted(t *testing.T) {
	w := NewWeighted([]int{1, 0, 3})
	r := NewRand(9, 9, 9)
	counts := make([]int, 3)
	for range 40_000 {
		counts[w.Pick(&r)]++
	}
	if counts[1] != 0 || counts[2] < 2*counts[0] {
		t.Errorf("weights 1, 0, 3 drawn %v times", counts)
	}
}

func TestRunTasks(t *testing.T) {
	var ran atomic.Int32
	tasks := make([]Task, 10)
	for i := range tasks {
		tasks[i] = Task{Name: "t", Cost: int64(i), Run: func(context.Context) error { ran.Add(1); return nil }}
	}
	if err := RunTasks(context.Background(), 3, tasks); err != nil || ran.Load() != 10 {
		t.Fatalf("err %v, %d of 10 tasks ran", err, ran.Load())
	}
	boom := errors.New("boom")
	err := RunTasks(context.Background(), 2, []Task{
		{Name: "bad", Run: func(context.Context) error { return boom }},
		{Name: "panics", Run: func(context.Context) error { panic("oops") }},
	})
	if err == nil || (!errors.Is(err, boom) && !strings.Contains(err.Error(), "oops")) {
		t.Fatalf("want the failing task's error, got %v", err)
	}
	err = RunTasks(context.Background(), 1, []Task{{Name: "p", Run: func(context.Context) error { panic("oops") }}})
	if err == nil || !strings.Contains(err.Error(), "p: internal error: oops") {
		t.Fatalf("a panic did not become the task's error: %v", err)
	}
}

func TestWriteUnitsLeavesNothingOnError(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	path := filepath.Join(dir, "t", "f.parquet")
	fail := errors.New("fill failed")
	_, err := WriteUnits(context.Background(), path, schema, FileOptions{}, 0, 100, 10, func(b *array.RecordBuilder, from, to int64) error {
		if from >= 50 {
			return fail
		}
		for i := from; i < to; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
		}
		return nil
	})
	if !errors.Is(err, fail) {
		t.Fatalf("got %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "t"))
	if len(entries) != 0 {
		t.Fatalf("a failed write left %v", entries)
	}
	n, err := WriteUnits(context.Background(), path, schema, FileOptions{}, 0, 100, 30, func(b *array.RecordBuilder, from, to int64) error {
		for i := from; i < to; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
		}
		return nil
	})
	if err != nil || n != 100 {
		t.Fatalf("%d rows, %v", n, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

func TestManifest(t *testing.T) {
	dir := t.TempDir()
	type m struct{ N int }
	if err := WriteManifest(dir, m{N: 7}); err != nil {
		t.Fatal(err)
	}
	var got m
	if err := ReadManifest(dir, &got); err != nil || got.N != 7 {
		t.Fatalf("%v, %v", got, err)
	}
	if err := StartDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := ReadManifest(dir, &got); err == nil {
		t.Fatal("StartDir left the old manifest")
	}
	if err := StartDir(""); err == nil {
		t.Fatal("an empty directory name was accepted")
	}
}
