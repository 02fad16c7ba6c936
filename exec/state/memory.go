// Package state stores checkpointed operator state. Memory keeps it in
// memory, written and read through Arrow IPC exactly as a checkpoint on
// disk is, so a round trip through it tests what a restore from disk sees.
package state

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// Memory is an in-memory exec.StateWriter and exec.StateReader.
type Memory struct {
	mem    memory.Allocator // for the batches Records returns
	mu     sync.Mutex
	parts  map[string][]byte // IPC stream bytes per Records part
	values map[string][]byte
}

var _ exec.StateWriter = (*Memory)(nil)

// NewMemory returns an empty store whose read batches are allocated from mem.
func NewMemory(mem memory.Allocator) *Memory {
	return &Memory{mem: mem, parts: map[string][]byte{}, values: map[string][]byte{}}
}

// Records implements exec.StateWriter.
func (m *Memory) Records(name string, schema *arrow.Schema, recs ...arrow.RecordBatch) error {
	var buf bytes.Buffer
	if err := WriteIPC(&buf, schema, recs); err != nil {
		return fmt.Errorf("state part %q: %w", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.parts[name]; dup {
		return fmt.Errorf("state part %q written twice", name)
	}
	m.parts[name] = buf.Bytes()
	return nil
}

// Value implements exec.StateWriter.
func (m *Memory) Value(name string, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.values[name]; dup {
		return fmt.Errorf("state value %q written twice", name)
	}
	m.values[name] = bytes.Clone(v)
	return nil
}

// ReadRecords implements exec.StateReader's Records (the writer's method
// of that name is the other direction).
func (m *Memory) ReadRecords(name string) (*arrow.Schema, []arrow.RecordBatch, bool, error) {
	m.mu.Lock()
	b, ok := m.parts[name]
	m.mu.Unlock()
	if !ok {
		return nil, nil, false, nil
	}
	schema, recs, err := ReadIPC(bytes.NewReader(b), m.mem)
	if err != nil {
		return nil, nil, true, fmt.Errorf("state part %q: %w", name, err)
	}
	return schema, recs, true, nil
}

// ReadValue implements exec.StateReader's Value.
func (m *Memory) ReadValue(name string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[name]
	return bytes.Clone(v), ok, nil
}

// Reader returns m as an exec.StateReader.
func (m *Memory) Reader() exec.StateReader { return memReader{m} }

type memReader struct{ m *Memory }

func (r memReader) Records(name string) (*arrow.Schema, []arrow.RecordBatch, bool, error) {
	return r.m.ReadRecords(name)
}
func (r memReader) Value(name string) ([]byte, bool, error) { return r.m.ReadValue(name) }

// Size is the bytes held, for tests and metrics.
func (m *Memory) Size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, b := range m.parts {
		n += len(b)
	}
	for _, v := range m.values {
		n += len(v)
	}
	return n
}

// RoundTrip snapshots s into a fresh Memory and restores it into r: the
// test helper every Snapshotter's tests use.
func RoundTrip(ctx context.Context, mem memory.Allocator, s, r exec.Snapshotter) error {
	m := NewMemory(mem)
	if err := s.SnapshotState(ctx, m); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := r.RestoreState(ctx, m.Reader()); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}
