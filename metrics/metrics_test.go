package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clink-sql/clink/engine"
)

// scrape GETs /metrics over real HTTP and parses the text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value finds the counter of family name with the given labels (0 if absent).
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m.GetCounter().GetValue()
	}
	return 0
}

func TestServeMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, ":0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr.String(), "127.0.0.1:") {
		t.Fatalf("an address without a host must bind loopback, bound %s", addr)
	}
	url := "http://" + addr.String() + "/metrics"
	before := scrape(t, url)
	for _, name := range []string{BatchMaterializations, RowsMaterialized, DecodeFallbacks, SkippedRecords} {
		if before[name] == nil {
			t.Errorf("%s missing from /metrics", name)
		} else if got := before[name].GetType(); got != dto.MetricType_COUNTER {
			t.Errorf("%s is a %s, want a counter", name, got)
		}
	}

	// A query whose filter runs its row path (columnar off) materialises
	// every batch the scan sends it: 600 rows of the fixture.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := engine.NewSession(engine.SessionOptions{Mem: mem, NoDemoCatalog: true})
	for _, st := range []string{
		"SET 'columnar' = 'off'",
		"SELECT id FROM '../testdata/parquet/duckdb_types.parquet' WHERE id >= 0",
	} {
		if _, err := s.Execute(ctx, st, nil, engine.ExecOptions{}); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	after := scrape(t, url)
	delta := func(name string, labels ...string) float64 {
		return value(after, name, labels...) - value(before, name, labels...)
	}
	if d := delta(OperatorRows, "kind", "filter", "direction", "in"); d != 600 {
		t.Errorf("filter rows in grew by %v, want 600", d)
	}
	if d := delta(OperatorRows, "kind", "parquet-scan", "direction", "out"); d != 600 {
		t.Errorf("parquet-scan rows out grew by %v, want 600", d)
	}
	if d := delta(OperatorColumnar, "kind", "filter", "direction", "in"); d < 1 {
		t.Errorf("filter columnar batches in grew by %v, want >= 1", d)
	}
	if d := delta(OperatorMaterialized, "kind", "filter"); d < 1 {
		t.Errorf("filter materialisations grew by %v, want >= 1", d)
	}
	if d := delta(BatchMaterializations); d < 1 {
		t.Errorf("%s grew by %v, want >= 1", BatchMaterializations, d)
	}
	if d := delta(RowsMaterialized); d < 600 {
		t.Errorf("%s grew by %v, want >= 600", RowsMaterialized, d)
	}
	// No label value may carry SQL text or a path.
	for name, f := range after {
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				if strings.ContainsAny(lp.GetValue(), "/' ") {
					t.Errorf("%s label %s=%q looks like SQL text or a path", name, lp.GetName(), lp.GetValue())
				}
			}
		}
	}

	// Only /metrics is served.
	resp, err := http.Get("http://" + addr.String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET / = %s, want 404", resp.Status)
	}
}

func TestServeBadAddress(t *testing.T) {
	if _, err := Serve(context.Background(), "no-port"); err == nil || !strings.Contains(err.Error(), "no-port") {
		t.Fatalf("want an error naming the address, got %v", err)
	}
}
