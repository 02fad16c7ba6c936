package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeCheckpoint stores c's state as stage 3 of checkpoint id in d.
func writeCheckpoint(t *testing.T, d *Dir, id int64, c *counter) {
	t.Helper()
	w, err := d.Begin(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SnapshotState(context.Background(), w.Stage(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// A checkpoint written to disk reads back as written; only complete ones
// count, the last three are kept, and another plan's is refused.
func TestDirRoundTripRetentionAndFingerprint(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	root := filepath.Join(t.TempDir(), "pipe")
	d, err := OpenDir(root, 3, "fp1")
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 5; id++ {
		writeCheckpoint(t, d, id, &counter{mem: mem, keys: []string{"a", "b"}, n: []int64{id, 2 * id}, wm: byte(id)})
	}
	// A crash while writing 6: files but no manifest.
	w, err := d.Begin(6)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&counter{mem: mem, keys: []string{"x"}, n: []int64{9}}).SnapshotState(context.Background(), w.Stage(3)); err != nil {
		t.Fatal(err)
	}
	ids, err := d.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 || ids[0] != 3 || ids[2] != 5 {
		t.Fatalf("complete checkpoints %v, want [3 4 5]", ids)
	}
	latest, ok, err := d.Latest()
	if err != nil || !ok || filepath.Base(latest) != "chk-5" {
		t.Fatalf("latest %q %v %v", latest, ok, err)
	}
	l, err := Load(latest, "fp1", mem)
	if err != nil {
		t.Fatal(err)
	}
	if l.ID() != 5 || l.Manifest.Size <= 0 {
		t.Fatalf("manifest %+v", l.Manifest)
	}
	r, ok := l.Stage(3)
	if !ok {
		t.Fatal("stage 3 missing")
	}
	_, recs, ok, err := r.Records("counts")
	if err != nil || !ok || len(recs) != 2 {
		t.Fatalf("records: %d %v %v", len(recs), ok, err)
	}
	for _, rec := range recs {
		if rec.NumRows() != 2 {
			t.Fatalf("%d rows", rec.NumRows())
		}
		rec.Release()
	}
	v, ok, _ := r.Value("wm")
	if !ok || v[0] != 5 {
		t.Fatalf("wm %v", v)
	}
	if _, ok := l.Stage(4); ok {
		t.Fatal("a stage never written was found")
	}
	if _, err := Load(latest, "fp2", mem); !errors.Is(err, ErrPlanChanged) {
		t.Fatalf("another plan's checkpoint: err = %v", err)
	}
	// The next checkpoint 6 replaces the leftover.
	writeCheckpoint(t, d, 6, &counter{mem: mem, keys: []string{"z"}, n: []int64{1}})
	if ids, _ := d.Checkpoints(); len(ids) != 3 || ids[0] != 4 {
		t.Fatalf("after 6: %v", ids)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "chk-6")); len(ents) != 2 {
		t.Fatalf("chk-6 holds %d files, want the part and the manifest", len(ents))
	}
}

// A directory that cannot be created fails with its path and cause.
func TestDirNotWritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenDir(filepath.Join(file, "pipe"), 3, "fp")
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("err = %v", err)
	}
}
