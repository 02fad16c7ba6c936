package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMinMaxStringsColumnar: the columnar MIN/MAX over strings (first-byte
// rejection, then a full comparison) against a plain string comparison,
// over values whose first bytes differ, values sharing long prefixes,
// empty strings and NULLs, in several groups and batches, with rows
// outside every group (id -1) and from a sliced array.
func TestMinMaxStringsColumnar(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(5))
	words := []string{"", "a", "b", "Z", "zz", "https://x/1", "https://x/10", "https://x/2", "\xff", "é"}
	const groups = 5
	for _, isMax := range []bool{false, true} {
		m, err := newMinMaxAcc(isMax, arrow.BinaryTypes.String)
		if err != nil {
			t.Fatal(err)
		}
		m.grow(groups)
		want := make([]*string, groups)
		for batch := 0; batch < 20; batch++ {
			b := array.NewStringBuilder(mem)
			n := 3 + rng.Intn(40)
			for range n + 2 {
				if rng.Intn(8) == 0 {
					b.AppendNull()
				} else {
					b.Append(words[rng.Intn(len(words))] + fmt.Sprint(rng.Intn(3))[:rng.Intn(2)])
				}
			}
			full := b.NewStringArray()
			b.Release()
			arr := array.NewSlice(full, 2, int64(n+2)).(*array.String)
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(rng.Intn(groups+1)) - 1
				if ids[i] < 0 || arr.IsNull(i) {
					continue
				}
				v := arr.Value(i)
				if w := want[ids[i]]; w == nil || (isMax && v > *w) || (!isMax && v < *w) {
					want[ids[i]] = &v
				}
			}
			if err := m.updateColumnar(arr, ids); err != nil {
				t.Fatal(err)
			}
			arr.Release()
			full.Release()
		}
		for g := range groups {
			got := m.value(g)
			if want[g] == nil {
				if got != nil {
					t.Fatalf("max=%v group %d: %q, want NULL", isMax, g, got)
				}
				continue
			}
			if got != *want[g] {
				t.Fatalf("max=%v group %d: %q, want %q", isMax, g, got, *want[g])
			}
		}
	}
}
