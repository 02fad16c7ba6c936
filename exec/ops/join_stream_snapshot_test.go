package ops

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/clink-sql/clink/exec"
)

// joinCase is a streaming join of two snapSchema inputs on k (a
// changelog input gets a row-kind column first), with the output the
// join's spec asks for.
func joinCase(name string, typ JoinType, leftLog bool, bound *TimeBound, ttl time.Duration, columnarOut bool) snapCase {
	left, right := snapSchema, snapSchema
	spec := StreamJoinSpec{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1, Time: bound, StateTTL: ttl}
	if leftLog {
		left = changelogSchema(snapSchema)
		spec.LeftKeys, spec.LeftOp = []int{1}, 0
		if bound != nil {
			b := *bound
			b.LeftCol = 5
			spec.Time = &b
		}
	}
	var fs []arrow.Field
	if spec.Changelog() {
		fs = append(fs, arrow.Field{Name: "op", Type: arrow.BinaryTypes.String})
	}
	for _, s := range []*arrow.Schema{snapSchema, snapSchema} {
		for _, f := range s.Fields() {
			f.Nullable = true
			fs = append(fs, f)
		}
	}
	spec.Out = arrow.NewSchema(fs, nil)
	if ttl > 0 {
		spec.Now = func() time.Time { return snapClock }
	}
	return snapCase{name: name, schemas: []*arrow.Schema{left, right}, ordered: true, columnarOut: columnarOut,
		newOp: func(mem memory.Allocator) exec.Operator { return NewStreamJoin(spec, mem) }}
}

// changelogRows makes a changelog of snapSchema rows: mostly inserts,
// with retractions (-U/-D) of rows inserted before and now and then one
// of a row never inserted.
type changelogRows struct {
	held []exec.Row
	row  func() exec.Row // a new row; nil: snapGen.row
}

func (c *changelogRows) next(g *snapGen) exec.Row {
	switch x := g.rng.Intn(10); {
	case x < 3 && len(c.held) > 0:
		i := g.rng.Intn(len(c.held))
		r := c.held[i]
		c.held = append(c.held[:i], c.held[i+1:]...)
		kind := OpDelete
		if x == 0 {
			kind = OpUpdateBefore
		}
		return append(exec.Row{kind}, r...)
	case x == 3:
		return append(exec.Row{OpDelete}, g.row()...)
	}
	r := g.row()
	if c.row != nil {
		r = c.row()
	}
	c.held = append(c.held, r)
	kind := OpInsert
	if g.rng.Intn(4) == 0 {
		kind = OpUpdateAfter
	}
	return append(exec.Row{kind}, r...)
}

// A streaming join restored from a snapshot emits the pairs (and
// padded rows and their retractions) the one that never stopped emits,
// in the same order: INNER, LEFT and FULL, with a time bound (state
// expires with the watermark), a state TTL, a changelog input.
func TestStreamJoinSnapshotResumes(t *testing.T) {
	bound := &TimeBound{LeftCol: 4, RightCol: 4, Lo: -1_000_000, Hi: 1_500_000, HasLo: true, HasHi: true}
	for _, c := range []snapCase{
		joinCase("inner", Inner, false, nil, 0, false),
		joinCase("inner, columnar out", Inner, false, nil, 0, true),
		joinCase("inner, time bound", Inner, false, bound, 0, true),
		joinCase("left", Left, false, nil, 0, false),
		joinCase("full, time bound", Full, false, bound, 0, false),
		joinCase("inner, state ttl", Inner, false, nil, 4*time.Second, false),
		joinCase("inner, changelog left", Inner, true, nil, 0, true),
		joinCase("left, changelog left, time bound", Left, true, bound, 0, false),
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs changelogRows
			rows := func(g *snapGen, in int) exec.Row {
				if in == 0 && c.schemas[0].NumFields() > snapSchema.NumFields() {
					return logs.next(g)
				}
				return g.row()
			}
			checkSeeds(t, c, 2, rows)
		})
	}
}

// A snapshot restored into a join of another shape fails with an error
// that says so.
func TestStreamJoinSnapshotMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := joinCase("inner", Inner, false, nil, 0, false)
	g := &snapGen{rng: snapRand(11), now: 1_700_000_000_000, keys: 4}
	steps := g.steps(20, 2, nil)
	from := c.newOp(mem)
	runSteps(t, mem, c, from, steps[:len(steps)-2])
	// The other join's right input has one column fewer.
	narrow := arrow.NewSchema(snapSchema.Fields()[:6], nil)
	fs := append(append([]arrow.Field{}, snapSchema.Fields()...), narrow.Fields()...)
	into := NewStreamJoin(StreamJoinSpec{Type: Inner, LeftKeys: []int{0}, RightKeys: []int{0}, LeftOp: -1, RightOp: -1,
		Out: arrow.NewSchema(fs, nil)}, mem)
	restoreMustFail(t, mem, from.(exec.Snapshotter), into, "columns")
	into.Close()
	from.Close()
}

// One input ends mid-stream: the restored join remembers it, and holds
// the other input's rows no longer (they would never be probed).
func TestStreamJoinSnapshotAfterOneInputEnded(t *testing.T) {
	for _, c := range []snapCase{
		joinCase("inner", Inner, false, nil, 0, false),
		joinCase("left", Left, false, nil, 0, false),
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := int64(1); seed <= 3; seed++ {
				g := &snapGen{rng: snapRand(seed), now: 1_700_000_000_000, keys: 5}
				all := g.steps(60, 2, nil)
				all = all[:len(all)-2]
				half := len(all) / 2
				steps := append([]snapStep{}, all[:half]...)
				steps = append(steps, snapStep{input: 1, finish: true})
				for _, s := range all[half:] {
					if s.isWM || s.input == 0 {
						steps = append(steps, s)
					}
				}
				steps = append(steps, snapStep{input: 0, finish: true})
				checkCuts(t, c, steps, []int{half + 1, half + 2, len(steps) - 3})
				checkStateRows(t, c, steps, half+1)
			}
		})
	}
}

// checkStateRows: after the cut, the restored join holds as many rows as
// the one that went on (held rows the output never shows).
func checkStateRows(t *testing.T, c snapCase, steps []snapStep, cut int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := c.newOp(mem).(*StreamJoin)
	runSteps(t, mem, c, b, steps[:cut])
	r := c.newOp(mem).(*StreamJoin)
	if err := roundTrip(b, r, mem); err != nil {
		t.Fatal(err)
	}
	rest := steps[cut : len(steps)-1] // before the last input ends
	runSteps(t, mem, c, b, rest)
	runSteps(t, mem, c, r, rest)
	bl, br := b.StateRows()
	rl, rr := r.StateRows()
	if bl != rl || br != rr {
		t.Errorf("state rows after the restore: %d left, %d right; without it: %d, %d", rl, rr, bl, br)
	}
	b.Close()
	r.Close()
}
