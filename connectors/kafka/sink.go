package kafka

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/exec"
)

// Sink writes each row as one JSON record. A columnar batch is encoded
// straight from its Arrow columns; a row batch is built into Arrow first so
// both carriers share the one encoder. Records are produced asynchronously;
// Finish flushes and reports the first failure.
type Sink struct {
	exec.Base
	t   *Table
	enc *jsonfmt.Encoder
	cl  *kgo.Client

	mu       sync.Mutex
	firstErr error
	produced int64
}

func newSink(t *Table) *Sink {
	return &Sink{t: t, enc: jsonfmt.NewEncoder(t.schema)}
}

// Kind names the sink in metrics and EXPLAIN.
func (s *Sink) Kind() string { return "kafka-sink" }

// Capabilities: the sink takes columnar batches without materialising.
func (s *Sink) Capabilities() exec.Capabilities { return exec.Capabilities{IngestsColumnar: true} }

// Produced is the number of records acknowledged by the broker.
func (s *Sink) Produced() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.produced
}

func (s *Sink) client() (*kgo.Client, error) {
	if s.cl != nil {
		return s.cl, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(s.t.cfg.brokers...), kgo.DefaultProduceTopic(s.t.cfg.topic),
		kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0)}
	switch s.t.cfg.partitioner {
	case "round-robin":
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	case "fixed":
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	s.cl = cl
	return cl, nil
}

// ProcessColumnar encodes the batch from its columns.
func (s *Sink) ProcessColumnar(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) (bool, error) {
	return true, s.write(ctx, b.Record())
}

// Process is the row path: the rows are built into Arrow and encoded by the
// same encoder.
func (s *Sink) Process(ctx context.Context, _ int, b *exec.Batch, _ exec.Emitter) error {
	if b.IsColumnar() {
		return s.write(ctx, b.Record())
	}
	rec, err := exec.EncodeRows(s.t.mem, s.t.schema, b.Rows())
	if err != nil {
		return fmt.Errorf("kafka sink topic '%s': %w", s.t.cfg.topic, err)
	}
	defer rec.Release()
	return s.write(ctx, rec)
}

func (s *Sink) write(ctx context.Context, rec arrow.RecordBatch) error {
	if err := s.err(); err != nil {
		return err
	}
	cl, err := s.client()
	if err != nil {
		return err
	}
	n := int(rec.NumRows())
	// One backing array per batch: kgo keeps each value until it is acked.
	buf := make([]byte, 0, n*128)
	for i := 0; i < n; i++ {
		start := len(buf)
		buf = s.enc.AppendRow(buf, rec, i)
		val := buf[start:len(buf):len(buf)]
		if cap(buf)-len(buf) < 1024 {
			buf = make([]byte, 0, max(n*128, 4096))
		}
		r := &kgo.Record{Value: val}
		if s.t.cfg.partitioner == "fixed" {
			r.Partition = 0
		}
		cl.Produce(ctx, r, s.ack)
	}
	return nil
}

func (s *Sink) ack(_ *kgo.Record, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.firstErr == nil {
			s.firstErr = fmt.Errorf("kafka sink topic '%s': %w", s.t.cfg.topic, err)
		}
		return
	}
	s.produced++
}

func (s *Sink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstErr
}

// Finish flushes every produced record and reports the first failure.
func (s *Sink) Finish(ctx context.Context, _ int, _ exec.Emitter) error {
	if s.cl == nil {
		return nil
	}
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka sink topic '%s': flush: %w", s.t.cfg.topic, err)
	}
	return s.err()
}

// OnWatermark: a sink has nothing to forward.
func (s *Sink) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// Close closes the client; records still buffered (a cancelled query, which
// never reaches Finish) are dropped, as Flink drops an uncheckpointed tail.
func (s *Sink) Close() {
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
}
