package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSemiJoinBuiltOnSmallerLeft: an EXISTS, IN or NOT EXISTS whose outer
// side is the smaller is built on the outer side (RIGHT SEMI / RIGHT
// ANTI: the inner rows probe it) and answers exactly as the definition:
// each outer row once, with (without) an inner row of its key; NULL keys
// never match. Duplicates on both sides, at parallelism 1 and 2.
func TestSemiJoinBuiltOnSmallerLeft(t *testing.T) {
	type outer struct {
		k *int64
		v string
	}
	var small []outer
	var vals []string
	for i := 0; i < 60; i++ {
		o := outer{v: fmt.Sprintf("v%d", i)}
		if i%9 != 0 {
			k := int64(i % 25) // duplicates
			o.k = &k
			vals = append(vals, fmt.Sprintf("(%d, '%s')", k, o.v))
		} else {
			vals = append(vals, fmt.Sprintf("(NULL, '%s')", o.v))
		}
		small = append(small, o)
	}
	inner := map[int64]bool{}
	var big []string
	for i := 0; i < 3000; i++ {
		k := int64(i%40) * 2 // even keys only, each many times
		if i%100 == 0 {
			big = append(big, "(NULL)")
			continue
		}
		inner[k] = true
		big = append(big, fmt.Sprintf("(%d)", k))
	}
	want := func(exists bool) []string {
		var out []string
		for _, o := range small {
			if (o.k != nil && inner[*o.k]) == exists {
				k := "NULL"
				if o.k != nil {
					k = fmt.Sprint(*o.k)
				}
				out = append(out, k+"|"+o.v)
			}
		}
		sort.Strings(out)
		return out
	}
	for _, parallelism := range []int{1, 2} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		s := NewSession(SessionOptions{Mem: mem, NoDemoCatalog: true})
		mustExec(t, s, fmt.Sprintf("SET 'parallelism' = '%d'", parallelism),
			"CREATE TABLE small (k BIGINT, v VARCHAR) WITH ('connector' = 'memory')",
			"CREATE TABLE big (k BIGINT) WITH ('connector' = 'memory')",
			"INSERT INTO small VALUES "+strings.Join(vals, ", "),
			"INSERT INTO big VALUES "+strings.Join(big, ", "))
		for _, c := range []struct {
			q, join string
			exists  bool
		}{
			{"SELECT k, v FROM small WHERE EXISTS (SELECT 1 FROM big WHERE big.k = small.k)", "RIGHT SEMI", true},
			{"SELECT k, v FROM small WHERE k IN (SELECT k FROM big)", "RIGHT SEMI", true},
			{"SELECT k, v FROM small WHERE NOT EXISTS (SELECT 1 FROM big WHERE big.k = small.k)", "RIGHT ANTI", false},
		} {
			o, err := s.Execute(context.Background(), "EXPLAIN "+c.q, nil, ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(o.Text, "HashJoin "+c.join) {
				t.Errorf("parallelism %d: %s: not built on the outer side:\n%s", parallelism, c.q, o.Text)
			}
			var got []string
			for _, r := range runRows(t, s, c.q) {
				k := "NULL"
				if r[0] != nil {
					k = fmt.Sprint(r[0])
				}
				got = append(got, k+"|"+r[1].(string))
			}
			sort.Strings(got)
			if w := want(c.exists); strings.Join(got, ",") != strings.Join(w, ",") {
				t.Errorf("parallelism %d: %s:\ngot  %v\nwant %v", parallelism, c.q, got, w)
			}
		}
		s.Close()
		mem.AssertSize(t, 0)
	}
}
