package ops

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// A watermark assigner restored from a snapshot emits the watermarks the
// uninterrupted one emits (never one behind what it had emitted), with
// and without the source's own clock bounding it.
func TestWatermarkAssignerSnapshotResumes(t *testing.T) {
	for _, follow := range []bool{false, true} {
		c := snapCase{name: "watermark", schemas: []*arrow.Schema{snapSchema}, ordered: true,
			newOp: func(mem memory.Allocator) exec.Operator {
				w := NewWatermarkAssigner(4, 500*time.Millisecond, mem)
				if follow {
					w.FollowSource()
				}
				return w
			}}
		t.Run(map[bool]string{false: "own clock", true: "follows the source"}[follow], func(t *testing.T) {
			checkSeeds(t, c, 1, nil)
		})
	}
}

// The assigner's counters survive a restore.
func TestWatermarkAssignerSnapshotCounters(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := snapCase{schemas: []*arrow.Schema{snapSchema}}
	g := &snapGen{rng: snapRand(4), now: 1_700_000_000_000, keys: 3}
	b := NewWatermarkAssigner(4, 0, mem)
	runSteps(t, mem, c, b, g.steps(40, 1, nil)[:40])
	if b.Behind() == 0 {
		t.Fatal("no record behind the watermark: the test proves nothing")
	}
	r := NewWatermarkAssigner(4, 0, mem)
	if err := roundTrip(b, r, mem); err != nil {
		t.Fatal(err)
	}
	if r.Report().Counters[0] != b.Report().Counters[0] || r.Watermark() != b.Watermark() {
		t.Errorf("restored %v wm %d, snapshotted %v wm %d", r.Report().Counters, r.Watermark(), b.Report().Counters, b.Watermark())
	}
}

// LIMIT over an unbounded input passes, after a restore, the rows that
// remain of its count.
func TestLimitSnapshotResumes(t *testing.T) {
	for _, lim := range [][2]int64{{25, 0}, {40, 13}, {0, 0}, {-1, 7}} {
		c := snapCase{name: "limit", schemas: []*arrow.Schema{snapSchema}, ordered: true,
			newOp: func(memory.Allocator) exec.Operator { return NewLimit(lim[0], lim[1]) }}
		if lim[0] == 0 {
			// LIMIT 0 passes nothing: check only that it restores.
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			if err := roundTrip(NewLimit(0, 0), NewLimit(0, 0), mem); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
			continue
		}
		checkSeeds(t, c, 1, nil)
	}
}
