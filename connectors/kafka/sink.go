package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/exec"
)

// Sink writes each row as one JSON record. A columnar batch is encoded
// straight from its Arrow columns; a row batch is built into Arrow first so
// both carriers share the one encoder.
//
// Records are produced asynchronously. With 'sink.delivery-guarantee' =
// 'at-least-once' (the default) Flush waits until every record the sink
// was given before the call is acknowledged by the broker (acks=all,
// idempotent), Finish flushes, and Close flushes what a cancelled
// statement had produced, so the runner can commit the source offsets of
// exactly what was delivered. A record not acknowledged within
// 'sink.delivery-timeout' fails the statement with the broker address and
// the cause. With 'none' nothing is waited for.
type Sink struct {
	exec.Base
	t   *Table
	enc *jsonfmt.Encoder
	cl  *kgo.Client

	mu sync.Mutex
	// The delivery ledger: each record counts in the epoch that was
	// current when it was produced; Flush closes the current epoch and
	// waits for it and every earlier one to drain. Acknowledgements
	// arrive out of order across partitions, so a plain count of
	// acknowledged records could not tell which records they were.
	epoch    uint64
	pending  map[uint64]int
	drained  chan struct{} // closed and replaced whenever an epoch drains
	firstErr error
	produced int64
	closed   bool
	closeErr error // the result of Close's flush, what Flush says after Close
}

func newSink(t *Table) *Sink {
	return &Sink{t: t, enc: jsonfmt.NewEncoder(t.schema), pending: map[uint64]int{}, drained: make(chan struct{})}
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

func (s *Sink) where() string {
	return fmt.Sprintf("kafka sink topic '%s' on %s", s.t.cfg.topic, strings.Join(s.t.cfg.brokers, ","))
}

func (s *Sink) client() (*kgo.Client, error) {
	if s.cl != nil {
		return s.cl, nil
	}
	cfg := s.t.cfg
	opts := []kgo.Opt{kgo.SeedBrokers(cfg.brokers...), kgo.DefaultProduceTopic(cfg.topic),
		kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0),
		// Bounds the wait for a broker that is down or unreachable: the
		// record fails with kgo's "timed out" error, which names the
		// last connection error (address included).
		kgo.RecordDeliveryTimeout(cfg.deliveryTimeout)}
	if cfg.guarantee == DeliverNone {
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	switch cfg.partitioner {
	case "round-robin":
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	case "fixed":
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.where(), err)
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
	if n == 0 {
		return nil
	}
	s.mu.Lock()
	epoch := s.epoch
	s.pending[epoch] += n
	s.mu.Unlock()
	ack := func(_ *kgo.Record, err error) { s.ack(epoch, err) }
	// kgo fails a buffered record whose context ends; a cancelled
	// statement's records must still go out (Close flushes them), so they
	// do not carry the statement's cancellation.
	ctx = context.WithoutCancel(ctx)
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
		// Produce blocks while kgo's buffer is full; the records ahead
		// free it by being acknowledged or by timing out, so a dead
		// broker cannot hold the statement past the delivery timeout.
		cl.Produce(ctx, r, ack)
	}
	return nil
}

func (s *Sink) ack(epoch uint64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && s.firstErr == nil {
		switch {
		case errors.Is(err, kgo.ErrRecordTimeout):
			s.firstErr = fmt.Errorf("%s: not acknowledged within 'sink.delivery-timeout' = %s: %w", s.where(), s.t.cfg.deliveryTimeout, err)
		case errors.Is(err, context.Canceled):
			s.firstErr = fmt.Errorf("%s: cancelled before it was acknowledged: %w", s.where(), err)
		default:
			s.firstErr = fmt.Errorf("%s: %w", s.where(), err)
		}
	}
	if err == nil {
		s.produced++
	}
	s.pending[epoch]--
	if s.pending[epoch] == 0 {
		delete(s.pending, epoch)
		close(s.drained)
		s.drained = make(chan struct{})
	}
}

func (s *Sink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstErr
}

// Flush returns once every record the sink was given before the call is
// acknowledged, or with the first delivery failure, or when ctx ends.
// Records given while it waits are not waited for. It is the hook a
// checkpoint calls at the sink's barrier (at-least-once); the runner
// without checkpoints calls it before committing source offsets. After
// Close it reports Close's own final flush. With 'sink.delivery-guarantee'
// = 'none' it does not wait.
func (s *Sink) Flush(ctx context.Context) error {
	if s.t.cfg.guarantee == DeliverNone {
		return nil
	}
	s.mu.Lock()
	if s.closed {
		defer s.mu.Unlock()
		return s.closeErr
	}
	fence := s.epoch
	s.epoch++
	for {
		if s.firstErr != nil || !s.pendingUpTo(fence) {
			err := s.firstErr
			s.mu.Unlock()
			return err
		}
		ch := s.drained
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%s: flush: %w", s.where(), context.Cause(ctx))
		}
		s.mu.Lock()
	}
}

// FlushBeforeBarrier implements exec.BarrierFlusher: at a checkpoint's
// barrier every record given before it is acknowledged before the
// checkpoint can complete (at-least-once), so the offsets the checkpoint
// records never pass a record the topic lacks.
func (s *Sink) FlushBeforeBarrier(ctx context.Context, _ exec.Emitter) error {
	return s.Flush(ctx)
}

// pendingUpTo reports whether a record of epoch fence or earlier is still
// unacknowledged. The caller holds mu.
func (s *Sink) pendingUpTo(fence uint64) bool {
	for e := range s.pending {
		if e <= fence {
			return true
		}
	}
	return false
}

// Finish flushes every produced record and reports the first failure.
func (s *Sink) Finish(ctx context.Context, _ int, _ exec.Emitter) error {
	if s.t.cfg.guarantee == DeliverNone {
		if s.cl != nil {
			if err := s.cl.Flush(ctx); err != nil {
				return fmt.Errorf("%s: flush: %w", s.where(), err)
			}
		}
		return s.err()
	}
	return s.Flush(ctx)
}

// OnWatermark: a sink has nothing to forward.
func (s *Sink) OnWatermark(context.Context, int64, exec.Emitter) error { return nil }

// Close flushes what was produced (a cancelled statement never reaches
// Finish) unless a delivery already failed or the guarantee is 'none',
// waiting at most the delivery timeout, then closes the client; a record
// still buffered then fails. The flush's outcome is what Flush reports
// from now on, so the runner commits source offsets only if it succeeded.
func (s *Sink) Close() {
	if s.cl == nil {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		return
	}
	var err error
	if s.t.cfg.guarantee != DeliverNone {
		// Each record fails by itself at the delivery timeout; the slack
		// only covers the acknowledgement's way back.
		ctx, cancel := context.WithTimeout(context.Background(), s.t.cfg.deliveryTimeout+5*time.Second)
		err = s.Flush(ctx)
		cancel()
	}
	s.cl.Close()
	s.mu.Lock()
	s.closed, s.closeErr = true, err
	s.mu.Unlock()
	s.cl = nil
}
