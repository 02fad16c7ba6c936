package explain

import (
	"strings"
	"testing"
	"time"
)

func TestHumanUnits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 9999: "9999", 12_345: "12.3K", 1_234_567: "1.2M", 3_000_000_000: "3.0G"} {
		if got := Human(n); got != want {
			t.Errorf("Human(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{85 * time.Microsecond: "85 µs", 340 * time.Millisecond: "340 ms", 1200 * time.Millisecond: "1.2 s"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The text is rendered from the document alone: a hand-built document with
// a held-back gate, a switch, a damper backed off in one of two subtasks and
// a cancelled run shows each of them.
func TestTextFromDocument(t *testing.T) {
	doc := &Document{Version: SchemaVersion, Analyze: true, Root: 2,
		Switches: Switches{DisableColumnar: "disabled: SET 'columnar' = 'off'"},
		Stages: []Stage{
			{ID: 0, Operator: "Scan", Args: "t", Source: true, Parallelism: 1, Emits: "born-columnar",
				Scan:    &Scan{Columns: []string{"a"}, IgnoredFilters: []string{"a > 1"}},
				Runtime: &Runtime{RowsOut: 20_000, BatchesOut: 3, BatchesOutColumnar: 3}},
			{ID: 1, Operator: "HashJoin", Args: "INNER ON a = b", Inputs: []int{0, 0}, Parallelism: 2,
				Ingests: "rows", IngestsReason: "disabled: SET 'columnar' = 'off'", Emits: "born-columnar",
				Gate: &Gate{Columnar: true, Reason: "consumers-ingest-columnar"},
				Runtime: &Runtime{RowsIn: 40_000, BatchesIn: 6, BatchesInColumnar: 6, ColumnarEmits: 4, HeldBackEmits: 9,
					BatchesMaterialized: 6, RowsMaterialized: 40_000,
					Damper:   &Damper{Subtasks: 2, BackedOffSubtasks: 1, SmallRun: 4, Threshold: 4, MinRows: 64, Probe: 64},
					Counters: []Count{{Name: "build rows", Value: 7}}}},
			{ID: 2, Operator: "ResultSink", Inputs: []int{1}, Parallelism: 1, Ingests: "columnar", Emits: "rows",
				Runtime: &Runtime{RowsIn: 13, BatchesIn: 13, BatchesInColumnar: 4, BatchesInRows: 9}},
		},
		Totals: &Totals{Rows: 13, ElapsedNanos: int64(2 * time.Second), End: EndCancelled, BatchesMaterialized: 6, RowsMaterialized: 40_000, ProcessBatchesMaterialized: 99},
	}
	txt := Text(doc, false)
	for _, want := range []string{
		"A/B switches: SET 'columnar' = 'off'",
		"[1] HashJoin INNER ON a = b  ×2",
		"ingests: rows (disabled: SET 'columnar' = 'off'); emits: born-columnar (consumers-ingest-columnar)",
		"in: 40.0K rows, 6 batches (columnar)",
		"materialised: 6 batches, 40.0K rows",
		"born-columnar emits: 4, held back to rows: 9; damper: backed off in 1 of 2 subtasks",
		"in: 13 rows, 13 batches (4 columnar, 9 rows)",
		"Totals: 13 rows in 2.0 s (cancelled; counts cover what ran); materialised by this query: 6 batches, 40.0K rows; process-wide clink_batch_materializations_total: 99",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "build rows") || strings.Contains(txt, "not used by this source") {
		t.Errorf("compact text shows verbose detail:\n%s", txt)
	}
	v := Text(doc, true)
	for _, want := range []string{"build rows: 7", "filters offered, not used by this source: a > 1"} {
		if !strings.Contains(v, want) {
			t.Errorf("verbose text lacks %q:\n%s", want, v)
		}
	}
	// The root is printed once, first; the sink emits nothing.
	if !strings.HasPrefix(strings.SplitN(txt, "\n", 2)[1], "[2] ResultSink") {
		t.Errorf("root is not first:\n%s", txt)
	}
	if strings.Contains(strings.SplitN(txt, "└─", 2)[0], "emits:") {
		t.Errorf("the root shows an emits line:\n%s", txt)
	}
}
