package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// A checkpoint (issue "Nothing lost, nothing twice") is a consistent cut of
// a running graph: every source records its position, a barrier follows its
// last batch before the cut through every stage, and each stateful stage
// writes its state once the barrier has arrived on all of its live inputs
// and before it forwards the barrier. A run resumed from the checkpoint
// restores every stage's state and every source's position, so it sees
// exactly the input after the cut.

// StateWriter receives one stage's (operator's or source's) state at a
// checkpoint. Each Records part is stored as an Arrow IPC file; Value parts
// are small scalars (positions, watermarks, counters) kept beside them.
// Names are unique within one stage's state.
type StateWriter interface {
	// Records stores one part as batches of one schema. The writer is done
	// with the batches when Records returns: the caller keeps ownership.
	// Zero batches is a valid (empty) part.
	Records(name string, schema *arrow.Schema, recs ...arrow.RecordBatch) error
	// Value stores one small part as bytes (the writer copies them).
	Value(name string, v []byte) error
}

// StateReader gives back what a StateWriter stored.
type StateReader interface {
	// Records returns the named part's batches; the caller releases each.
	// ok is false when the part was not written.
	Records(name string) (schema *arrow.Schema, recs []arrow.RecordBatch, ok bool, err error)
	// Value returns a Value part; ok is false when it was not written.
	Value(name string) (v []byte, ok bool, err error)
}

// Snapshotter is implemented by every operator and source that keeps state
// across batches (window and updating aggregates, joins, top-n,
// deduplication, watermark assigners; sources for their positions). A plan
// with a stateful operator that is not a Snapshotter cannot be
// checkpointed, and the engine says so rather than checkpoint without it.
type Snapshotter interface {
	// SnapshotState writes the state that reflects every input before the
	// barrier and nothing after it. It is called between batches with the
	// stage's lock held; it must not change the state (the run goes on),
	// and must not keep references the writer could see change (Records
	// has finished with its batches when it returns).
	SnapshotState(ctx context.Context, w StateWriter) error
	// RestoreState loads a state SnapshotState wrote into a freshly built
	// operator of the same plan, once, before the graph runs. Afterwards the
	// operator behaves as the snapshotted one would have: the same output
	// for the same later input, watermarks and end of input.
	RestoreState(ctx context.Context, r StateReader) error
}
