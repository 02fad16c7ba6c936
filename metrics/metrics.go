// Package metrics serves clink's process-wide counters on /metrics in the
// Prometheus text format. Every value is sampled from the executor's own
// counters at scrape time (exec.Global, exec.OperatorTotals), so the hot
// path keeps paying only the atomic adds it already does.
//
// Label values are operator kinds and directions only: never SQL text,
// table names or file paths, which could be sensitive and unbounded.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clink-sql/clink/exec"
)

// Metric names, stable for dashboards.
const (
	BatchMaterializations = "clink_batch_materializations_total"
	RowsMaterialized      = "clink_rows_materialized_total"
	DecodeFallbacks       = "clink_decode_fallbacks_total"
	SkippedRecords        = "clink_skipped_records_total"
	OperatorRows          = "clink_operator_rows_total"
	OperatorBatches       = "clink_operator_batches_total"
	OperatorColumnar      = "clink_operator_columnar_batches_total"
	OperatorMaterialized  = "clink_operator_batch_materializations_total"
	Checkpoints           = "clink_checkpoints_total"
	CheckpointLastID      = "clink_checkpoint_last_id"
	CheckpointLastSeconds = "clink_checkpoint_last_duration_seconds"
	CheckpointLastBytes   = "clink_checkpoint_last_size_bytes"
)

// collector turns the executor's counters into metrics at scrape time.
type collector struct {
	batchesMat, rowsMat, fallbacks, skipped *prometheus.Desc
	opRows, opBatches, opColumnar, opMat    *prometheus.Desc
	ckTotal, ckID, ckSeconds, ckBytes       *prometheus.Desc
}

func newCollector() *collector {
	kd := []string{"kind", "direction"}
	return &collector{
		batchesMat: prometheus.NewDesc(BatchMaterializations, "Columnar batches decoded into rows (materialised), process-wide.", nil, nil),
		rowsMat:    prometheus.NewDesc(RowsMaterialized, "Rows decoded from columnar batches, process-wide.", nil, nil),
		fallbacks:  prometheus.NewDesc(DecodeFallbacks, "Batches a columnar decoder gave up on and decoded as rows.", nil, nil),
		skipped:    prometheus.NewDesc(SkippedRecords, "Bad input records skipped by sources.", nil, nil),
		opRows:     prometheus.NewDesc(OperatorRows, "Rows into (direction=in) and out of (direction=out) operators and sources, by kind.", kd, nil),
		opBatches:  prometheus.NewDesc(OperatorBatches, "Batches into and out of operators and sources, by kind.", kd, nil),
		opColumnar: prometheus.NewDesc(OperatorColumnar, "Batches carrying an Arrow record into and out of operators and sources, by kind.", kd, nil),
		opMat:      prometheus.NewDesc(OperatorMaterialized, "Batches materialised into rows by operators of this kind.", []string{"kind"}, nil),
		ckTotal:    prometheus.NewDesc(Checkpoints, "Checkpoints completed, process-wide.", nil, nil),
		ckID:       prometheus.NewDesc(CheckpointLastID, "The id of the last completed checkpoint.", nil, nil),
		ckSeconds:  prometheus.NewDesc(CheckpointLastSeconds, "How long the last completed checkpoint took, trigger to manifest.", nil, nil),
		ckBytes:    prometheus.NewDesc(CheckpointLastBytes, "The bytes the last completed checkpoint wrote.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.batchesMat, c.rowsMat, c.fallbacks, c.skipped, c.opRows, c.opBatches, c.opColumnar, c.opMat,
		c.ckTotal, c.ckID, c.ckSeconds, c.ckBytes} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(c.batchesMat, exec.Global.BatchesMaterialized.Load())
	counter(c.rowsMat, exec.Global.RowsMaterialized.Load())
	counter(c.fallbacks, exec.Global.DecodeFallbacks.Load())
	counter(c.skipped, exec.Global.SkippedRecords.Load())
	counter(c.ckTotal, exec.Global.Checkpoints.Load())
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	gauge(c.ckID, float64(exec.Global.LastCheckpointID.Load()))
	gauge(c.ckSeconds, time.Duration(exec.Global.LastCheckpointNanos.Load()).Seconds())
	gauge(c.ckBytes, float64(exec.Global.LastCheckpointSizeBytes.Load()))
	totals := exec.OperatorTotals()
	kinds := make([]string, 0, len(totals))
	for k := range totals {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t := totals[k]
		counter(c.opRows, t.RowsIn, k, "in")
		counter(c.opRows, t.RowsOut, k, "out")
		counter(c.opBatches, t.BatchesIn, k, "in")
		counter(c.opBatches, t.BatchesOut, k, "out")
		counter(c.opColumnar, t.BatchesInColumnar, k, "in")
		counter(c.opColumnar, t.BatchesOutColumnar, k, "out")
		counter(c.opMat, t.BatchesMaterialized, k)
	}
}

// Handler is the /metrics handler over a registry of its own (not the
// global default registry, which any imported package may write to).
func Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Serve listens on addr and serves /metrics until ctx ends. An address
// without a host (":9464") binds the loopback interface: exposing the
// counters beyond this machine must be asked for by naming a host. It
// returns the address actually bound (useful with port 0).
func Serve(ctx context.Context, addr string) (net.Addr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address '%s': %w (want host:port, e.g. 127.0.0.1:9464)", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			// Nothing to report to: the listener was ours and is gone.
			_ = ln.Close()
		}
	}()
	return ln.Addr(), nil
}
