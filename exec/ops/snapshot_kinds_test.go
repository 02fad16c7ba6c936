package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
	"github.com/clink-sql/clink/exec/state"
)

// notCheckpointed are the operator kinds of Kinds() that do not implement
// exec.Snapshotter, each with why. Every other kind must: a stateful
// streaming operator added to Kinds() fails TestEveryStatefulKindSnapshots
// until it can be checkpointed or is listed here with a reason.
var notCheckpointed = map[string]string{
	// Stateless: each batch is handled on its own.
	"filter":        "stateless",
	"project":       "stateless",
	"union_all":     "stateless (the minimum watermark over its inputs is the runner's)",
	"window_assign": "stateless: a row's windows follow from its own time",
	"expand":        "stateless",
	"collect":       "a sink that hands each batch to a callback and keeps nothing",
	// Bounded only: the planner gives them finite inputs (ORDER BY without
	// LIMIT and OVER are refused over unbounded ones; ORDER BY ... LIMIT
	// is updating_topn there), and they emit at the end of the input.
	"sort":         "bounded inputs only",
	"top_n":        "bounded inputs only (an unbounded one gets updating_topn)",
	"window_funcs": "bounded inputs only (OVER over an unbounded input is stream_rank, stream_dedup_first, stream_over_aggregate or window_rank)",
	// Not yet: it can run over an unbounded input and hold state.
	"set_op": "NOT YET: INTERSECT/EXCEPT over an unbounded input holds both inputs' counts",
}

// Every operator kind keeping state across batches is a Snapshotter, the
// list of those that are not names only real kinds that are not, and each
// sample's state, after some input, round-trips through state.Memory.
func TestEveryStatefulKindSnapshots(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	seen := map[string]bool{}
	for _, k := range Kinds() {
		seen[k.Name] = true
		op := k.New(mem)
		s, ok := op.(exec.Snapshotter)
		why, listed := notCheckpointed[k.Name]
		switch {
		case listed && ok:
			t.Errorf("%s implements exec.Snapshotter but is listed as not checkpointed (%s): take it off the list", k.Name, why)
		case !listed && !ok:
			t.Errorf("%s keeps no checkpoint state (not an exec.Snapshotter) and is not listed in notCheckpointed with a reason", k.Name)
		}
		if ok {
			out := &capture{}
			for in := range k.Ports() {
				for _, b := range makeBatches(t, mem, input{SampleSchema, sampleRows(20, true)}, 7, in == 0) {
					if _, err := exec.Dispatch(ctx, op, true, in, b, out); err != nil {
						t.Fatalf("%s: %v", k.Name, err)
					}
					b.Release()
				}
			}
			out.rows() // releases what was emitted
			fresh := k.New(mem)
			if err := state.RoundTrip(ctx, mem, s, fresh.(exec.Snapshotter)); err != nil {
				t.Errorf("%s: %v", k.Name, err)
			}
			fresh.Close()
			// A layout version this build does not know is refused by name.
			m := state.NewMemory(mem)
			if err := s.SnapshotState(ctx, m); err != nil {
				t.Fatal(err)
			}
			fresh = k.New(mem)
			err := fresh.(exec.Snapshotter).RestoreState(ctx, versionOverride{m.Reader(), []byte{99, 0, 0, 0}})
			if err == nil || !strings.Contains(err.Error(), "layout version 99") {
				t.Errorf("%s: a state of layout version 99 gave %v", k.Name, err)
			}
			fresh.Close()
		}
		op.Close()
	}
	for name := range notCheckpointed {
		if !seen[name] {
			t.Errorf("notCheckpointed lists %q, which is no kind of Kinds()", name)
		}
	}
}

// versionOverride reads a state with its "version" Value replaced.
type versionOverride struct {
	exec.StateReader
	v []byte
}

func (o versionOverride) Value(name string) ([]byte, bool, error) {
	if name == "version" {
		return o.v, true, nil
	}
	return o.StateReader.Value(name)
}
