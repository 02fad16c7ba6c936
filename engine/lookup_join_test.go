package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// q13's shape: a bid stream joined FOR SYSTEM_TIME AS OF its PROCTIME()
// with a CSV side table declared with Flink's legacy options. The side
// table holds the even keys of 0..99 only, so INNER drops the bids of odd
// keys and LEFT keeps them with NULL; the expectation is computed from a
// plain read of the bids.
func TestLookupJoinSideInput(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	for k := 0; k < 100; k += 2 {
		fmt.Fprintf(&sb, "%d,v%d\n", k, k)
	}
	side := filepath.Join(dir, "side_input.txt")
	if err := os.WriteFile(side, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sideDDL := "CREATE TABLE side_input (key BIGINT, `value` VARCHAR) WITH ('connector.type' = 'filesystem', " +
		"'connector.path' = 'file://" + side + "', 'format.type' = 'csv')"
	for _, join := range []string{"JOIN", "LEFT JOIN"} {
		for _, par := range []string{"1", "2"} {
			t.Run(join+"/parallelism="+par, func(t *testing.T) {
				s := NewSession(SessionOptions{NoDemoCatalog: true})
				defer s.Close()
				runRows(t, s, "SET 'parallelism' = '"+par+"'")
				runRows(t, s, "SET 'execution.runtime-mode' = 'streaming'")
				runRows(t, s, windowBidDDL)
				runRows(t, s, sideDDL)
				q := "SELECT B.auction, B.price, S.`value` FROM (SELECT *, PROCTIME() AS p_time FROM b) B " +
					join + " side_input FOR SYSTEM_TIME AS OF B.p_time AS S ON mod(B.auction, 100) = S.key"
				plan := strings.Join(explainLines(t, s, "EXPLAIN "+q), "\n")
				if !strings.Contains(plan, "LookupJoin") {
					t.Fatalf("no lookup join in the plan:\n%s", plan)
				}
				var want []string
				for _, r := range runRows(t, s, "SELECT auction, price FROM b") {
					a := r[0].(int64)
					switch k := a % 100; {
					case k%2 == 0:
						want = append(want, fmt.Sprintf("%d %d v%d", a, r[1], k))
					case join == "LEFT JOIN":
						want = append(want, fmt.Sprintf("%d %d <nil>", a, r[1]))
					}
				}
				var got []string
				for _, r := range runRows(t, s, q) {
					got = append(got, fmt.Sprintf("%v %v %v", r[0], r[1], r[2]))
				}
				sort.Strings(got)
				sort.Strings(want)
				if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("got %d rows, want %d", len(got), len(want))
				}
			})
		}
	}
}

func TestLookupJoinErrors(t *testing.T) {
	dir := t.TempDir()
	side := filepath.Join(dir, "side.csv")
	if err := os.WriteFile(side, []byte("1,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSession(SessionOptions{NoDemoCatalog: true})
	defer s.Close()
	runRows(t, s, "SET 'execution.runtime-mode' = 'streaming'")
	runRows(t, s, windowBidDDL)
	runRows(t, s, procTimeBidDDL)
	runRows(t, s, "CREATE TABLE inf (auction BIGINT, bidder BIGINT) WITH ('connector' = 'nexmark', 'table' = 'bid')")
	runRows(t, s, "CREATE TABLE side (key BIGINT, v VARCHAR) WITH ('connector' = 'filesystem', 'path' = '"+side+"', 'format' = 'csv')")
	for q, want := range map[string]string{
		"SELECT * FROM b JOIN side FOR SYSTEM_TIME AS OF b.`dateTime` ON b.auction = side.key":                              "is not a versioned table",
		"SELECT * FROM pb JOIN side FOR SYSTEM_TIME AS OF pb.price ON pb.auction = side.key":                                "expected a PROCTIME() attribute",
		"SELECT * FROM pb RIGHT JOIN side FOR SYSTEM_TIME AS OF pb.p ON pb.auction = side.key":                              "INNER or LEFT JOIN",
		"SELECT * FROM side JOIN pb FOR SYSTEM_TIME AS OF side.key ON pb.auction = side.key":                                "expected a PROCTIME() attribute",
		"SELECT * FROM (SELECT *, PROCTIME() AS pt FROM side) s JOIN inf FOR SYSTEM_TIME AS OF s.pt ON inf.auction = s.key": "this one is unbounded",
		"SELECT * FROM side FOR SYSTEM_TIME AS OF side.key":                                                                 "only valid on the table a JOIN looks up",
	} {
		_, err := s.Execute(context.Background(), q, &rowsWriter{}, ExecOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  error %v, want %q", q, err, want)
		}
	}
}
