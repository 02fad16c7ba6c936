package sqllogictest

import (
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minPassRate and minFullPassRate are the shares of the SQLite corpus's
// run records (passed / (passed + failed)) that must pass, in the default
// sample and in the full run (CLINK_SLT_FULL=1; the sample keeps every
// statement but only a tenth of the queries). With clink's own front end
// every run record passes: the full corpus 10932 of 10932, with 95
// records marked for other engines and the 4 of
// testdata/sqllogictest/skips.txt (SQLite's comparisons across storage
// classes) skipped. The floor is the 99%: a regression below it
// fails, and a failing record shows in the log either way.
const (
	minPassRate     = 0.99
	minFullPassRate = 0.99
)

// sampleEvery: the default run keeps one query in this many of the
// select*.test files (and every statement, which only sets up tables).
const sampleEvery = 10

// corpusDir is the SQLite corpus: $CLINK_SLT_CORPUS, or shared/sqllogictest
// beside the repository. With required, a missing corpus fails the test
// unless CLINK_SLT_CORPUS=none says it is meant to be absent.
func corpusDir(t *testing.T, required bool) string {
	dir := os.Getenv("CLINK_SLT_CORPUS")
	if dir == "none" {
		if required {
			t.Skip("CLINK_SLT_CORPUS=none: the SQLite corpus is not run")
		}
		return ""
	}
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "sqllogictest")
	}
	if _, err := os.Stat(filepath.Join(dir, "select1.test")); err != nil && required {
		t.Fatalf("the SQLite corpus is not at %s (%v): set CLINK_SLT_CORPUS to its directory, or CLINK_SLT_CORPUS=none to leave it out", dir, err)
	}
	return dir
}

// sampled keeps every statement and one query in sampleEvery, chosen by a
// hash of its file name and line so the sample is the same in every run.
func sampled(r *Record) bool {
	if r.Kind != Query {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(filepath.Base(r.File)))
	h.Write([]byte{byte(r.Line), byte(r.Line >> 8), byte(r.Line >> 16)})
	return h.Sum32()%sampleEvery == 0
}

// TestSQLiteCorpus runs SQLite's sqllogictest corpus: every evidence file
// whole and a sample of select1-5 (CLINK_SLT_FULL=1: all of it), with the
// skip list in testdata/sqllogictest/skips.txt, and checks the pass rate.
func TestSQLiteCorpus(t *testing.T) {
	dir := corpusDir(t, true)
	full := os.Getenv("CLINK_SLT_FULL") == "1"
	evidence, _ := filepath.Glob(filepath.Join(dir, "evidence", "*.test"))
	selects, _ := filepath.Glob(filepath.Join(dir, "select*.test"))
	if len(selects) == 0 || len(evidence) == 0 {
		t.Fatalf("%s has %d select*.test and %d evidence/*.test files", dir, len(selects), len(evidence))
	}
	skips, err := LoadSkipList(filepath.Join("..", "testdata", "sqllogictest", "skips.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var total Summary
	run := func(files []string, keep func(*Record) bool) {
		r := NewRunner(Options{Skips: skips, Keep: keep, Out: &out})
		for _, f := range files {
			s := r.RunFile(context.Background(), f)
			t.Logf("%s: %s", filepath.Base(f), s)
			total.Merge(s)
		}
	}
	run(evidence, nil)
	if full {
		run(selects, nil)
	} else {
		run(selects, sampled)
	}
	what, floor := "sample", minPassRate
	if full {
		what, floor = "full corpus", minFullPassRate
	}
	t.Logf("%s: %s; pass rate %.2f%% (minimum %.2f%%)", what, total, 100*total.PassRate(), 100*floor)
	if testing.Verbose() {
		t.Logf("failures:\n%s", out.String())
	}
	if total.PassRate() < floor {
		t.Errorf("%s: pass rate %.2f%% is below the minimum %.2f%% (%s)", what, 100*total.PassRate(), 100*floor, total)
	}
	// A stale skip-list entry is a failure like any other: it would
	// otherwise hide that a record now passes.
	if strings.Contains(out.String(), "remove the entry") || strings.Contains(out.String(), "remove or fix the entry") {
		t.Errorf("the skip list has stale entries:\n%s", grepLines(out.String(), "the skip list"))
	}
}

func grepLines(s, sub string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
