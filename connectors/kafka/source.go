package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/exec"
)

// Source reads one topic. Each partition has its own decode goroutine (and
// decoder, damper included); batches of one partition are emitted in
// offset order.
//
// The source never commits group offsets by itself: what it has emitted is
// not yet delivered (a sink buffers, an aggregate holds state). It keeps
// the position after the last batch whose Emit returned, and the runner
// commits it through MarkPosition once the sink has confirmed delivery of
// everything emitted before the mark (see engine's runGraph).
type Source struct {
	t         *Table
	cols      []int // output columns, indexes into the table schema
	schema    *arrow.Schema
	phys      *arrow.Schema // the decoded (non-metadata) output columns
	batchSize int
	progress  *exec.Progress

	mu         sync.Mutex
	decoders   map[int32]*jsonfmt.Decoder
	emitted    map[int32]int64 // partition -> the offset after its last emitted record
	ended      bool            // the bounded end was reached and emitted
	committed  map[int32]int64 // what the group holds from this source's commits
	commitErrs int64

	eventTime func(*exec.Batch) (int64, bool, error) // SetEventTime

	// Checkpoints (checkpoint.go): the offsets restored from one, and the
	// last snapshot's, committed to the group when it completes.
	restored  map[int32]int64
	snapshots map[int32]int64
}

// OpenSource is Open with the concrete type.
func (t *Table) OpenSource(spec connectors.ScanSpec) (*Source, error) {
	cols := spec.Columns
	if cols == nil {
		cols = allColumns(len(t.schema.Fields()))
	}
	fs := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c < 0 || c >= len(t.schema.Fields()) {
			return nil, fmt.Errorf("kafka: topic '%s': scan column %d out of range", t.cfg.topic, c)
		}
		fs[i] = t.schema.Field(c)
	}
	if t.cfg.startup == StartGroup && t.cfg.group == "" {
		return nil, fmt.Errorf("kafka: topic '%s': 'scan.startup.mode' = 'group-offsets' (the default) needs 'properties.group.id'", t.cfg.topic)
	}
	bs := t.cfg.batchSize
	if spec.BatchSize > 0 {
		bs = spec.BatchSize
	}
	return &Source{t: t, cols: cols, schema: arrow.NewSchema(fs, nil), phys: t.physical(cols),
		batchSize: bs, progress: spec.Progress, decoders: map[int32]*jsonfmt.Decoder{},
		emitted: map[int32]int64{}, committed: map[int32]int64{}}, nil
}

// Kind names the source in metrics and EXPLAIN.
func (s *Source) Kind() string { return "kafka-source" }

// Capabilities: batches are born columnar unless the decode falls back.
func (s *Source) Capabilities() exec.Capabilities { return exec.Capabilities{EmitsColumnar: true} }

// Schema is the emitted batches' schema.
func (s *Source) Schema() *arrow.Schema { return s.schema }

// Stats sums the partitions' decode counters, for EXPLAIN ANALYZE.
func (s *Source) Stats() jsonfmt.DecodeStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out jsonfmt.DecodeStats
	for _, d := range s.decoders {
		out.Add(d.Stats())
	}
	return out
}

func (s *Source) decoder(p int32) (*jsonfmt.Decoder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.decoders[p]; ok {
		return d, nil
	}
	// Every declared field is judged, read or not: a record is good or
	// bad by itself, so count(*) counts the rows SELECT * returns.
	d, err := jsonfmt.NewProjectedDecoder(s.t.mem, s.t.physical(nil), s.t.physicalIndexes(s.cols), s.t.cfg.json)
	if err != nil {
		return nil, err
	}
	s.decoders[p] = d
	return d, nil
}

// SetEventTime makes each partition's clock the latest event time of its
// records, read by f from each decoded batch (the WATERMARK column, a
// computed one included; f reports false for a batch without one), instead
// of the records' Kafka timestamps. The planner sets it when a table
// declares a WATERMARK; the assigner after the scan subtracts the delay.
func (s *Source) SetEventTime(f func(b *exec.Batch) (maxMicros int64, ok bool, err error)) {
	s.eventTime = f
}

func floorDivMs(us int64) int64 {
	q := us / 1000
	if us%1000 < 0 {
		q--
	}
	return q
}

// decoded is one partition batch ready to emit.
type decoded struct {
	p     int32
	b     *exec.Batch // nil when every record was skipped
	next  int64       // the offset after the batch's last record
	maxTs int64       // max record timestamp, ms
	done  bool        // the partition reached its bounded end
	err   error
}

// Run reads until the bounded end, ctx ends or the consumer stops.
func (s *Source) Run(ctx context.Context, out exec.Emitter) error {
	cfg := s.t.cfg
	admCl, err := kgo.NewClient(kgo.SeedBrokers(cfg.brokers...))
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	starts, ends, err := s.offsets(ctx, kadm.NewClient(admCl))
	admCl.Close()
	if err != nil {
		return err
	}

	var parts []int32
	assign := map[int32]kgo.Offset{}
	s.mu.Lock()
	for p, off := range starts {
		// Every partition has a position from the start, so a
		// checkpoint taken before it emitted anything still records
		// where it starts (not the startup mode's answer of a later run).
		if _, ok := s.emitted[p]; !ok {
			s.emitted[p] = off
		}
	}
	s.mu.Unlock()
	for p, off := range starts {
		if cfg.bounded && off >= ends[p] {
			continue // nothing to read up to the bounded end
		}
		parts = append(parts, p)
		assign[p] = kgo.NewOffset().At(off)
	}
	if len(assign) == 0 {
		if cfg.bounded {
			return s.end(ctx, out)
		}
	}

	opts := []kgo.Opt{kgo.SeedBrokers(cfg.brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.topic: assign}),
		kgo.FetchMaxWait(250 * time.Millisecond),
		// Transaction markers come through (and are dropped before
		// decoding) so the position moves past them: a bounded scan
		// whose end offset follows a marker would otherwise never see
		// its last offset.
		kgo.KeepControlRecords()}
	if cfg.readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	defer cl.Close()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan decoded, 2*len(assign)+2)
	work := map[int32]chan []*kgo.Record{}
	var wg sync.WaitGroup
	for p := range assign {
		ch := make(chan []*kgo.Record, 2)
		work[p] = ch
		wg.Add(1)
		go func(p int32) {
			defer wg.Done()
			defer recoverTo(runCtx, results, fmt.Sprintf("kafka topic '%s' partition %d decode", cfg.topic, p))
			s.decodeLoop(runCtx, p, ch, results)
		}(p)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer recoverTo(runCtx, results, fmt.Sprintf("kafka topic '%s' fetch", cfg.topic))
		s.pollLoop(runCtx, cl, work, ends, results)
	}()
	defer func() {
		cancel()
		wg.Wait()
		close(results)
		for r := range results {
			if r.b != nil {
				r.b.Release()
			}
		}
	}()

	wm := exec.MinWatermark
	clocks := newPartitionClocks(parts, cfg.idle, time.Now()) // watermark.go
	// The idle timeout is judged on a timer too: a partition goes idle,
	// and the watermark moves on, while no record arrives anywhere.
	idleTimer := time.NewTimer(time.Hour)
	defer idleTimer.Stop()
	rearm := func() {
		idleTimer.Stop()
		if d := clocks.nextIdle(time.Now()); d > 0 {
			idleTimer.Reset(d)
		}
	}
	rearm()
	for clocks.live() > 0 {
		var r decoded
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r = <-results:
		case <-idleTimer.C:
			if err := s.advance(ctx, out, clocks, &wm); err != nil {
				return stopIsEnd(err)
			}
			rearm()
			continue
		}
		if r.err != nil {
			return r.err
		}
		// The batch and the position after it are one step for a
		// checkpoint barrier (exec.EmitThen).
		err := exec.EmitThen(ctx, out, r.b, func() {
			if r.next >= 0 {
				s.mu.Lock()
				s.emitted[r.p] = r.next
				s.mu.Unlock()
			}
		})
		if r.b != nil {
			n := r.b.Len()
			r.b.Release()
			if errors.Is(err, exec.ErrStop) {
				return nil // not committed: the consumer did not take all of it
			}
			if err != nil {
				return err
			}
			if s.progress != nil {
				s.progress.RowsRead.Add(int64(n))
			}
		}
		clocks.observe(r.p, r.maxTs, r.b != nil && r.b.Len() > 0, time.Now())
		if r.done {
			clocks.end(r.p)
		}
		if err := s.advance(ctx, out, clocks, &wm); err != nil {
			return stopIsEnd(err)
		}
		rearm()
	}
	return s.end(ctx, out)
}

// advance emits the partitions' watermark when it moved past *wm.
func (s *Source) advance(ctx context.Context, out exec.Emitter, clocks *partitionClocks, wm *int64) error {
	w, ok := clocks.watermark(time.Now())
	if !ok || w <= *wm || clocks.live() == 0 {
		return nil
	}
	*wm = w
	return out.EmitWatermark(ctx, w)
}

// stopIsEnd turns a consumer's ErrStop into the source's normal end.
func stopIsEnd(err error) error {
	if errors.Is(err, exec.ErrStop) {
		return nil
	}
	return err
}

// end emits the final watermark of a bounded scan and records that every
// record up to the end was emitted.
func (s *Source) end(ctx context.Context, out exec.Emitter) error {
	if err := emitEnd(ctx, out); err != nil {
		return err
	}
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	return nil
}

// MarkPosition snapshots the read position: for each partition, the offset
// after the last record of a batch whose Emit has returned. commit stores
// it as the group's offsets (nothing without 'properties.group.id'); ended
// reports that the bounded end was reached, so everything the scan will
// ever emit has been emitted.
//
// It is the hook checkpoints build on: a checkpoint barrier leaving the
// source takes the mark (stored with the checkpoint), and the checkpoint's
// completion calls commit.
func (s *Source) MarkPosition() (commit func(context.Context) error, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pos := make(map[int32]int64, len(s.emitted))
	for p, o := range s.emitted {
		pos[p] = o
	}
	return func(ctx context.Context) error { return s.commit(ctx, pos) }, s.ended
}

// CommitInterval is how often a running job may commit its delivered
// position ('properties.auto.commit.interval.ms'); 0: only when it stops.
func (s *Source) CommitInterval() time.Duration { return s.t.cfg.commitEvery }

const minTs = -1 << 63

// recoverTo turns a panic in one of the source's goroutines into the
// query's error (the graph's recover only covers Run's own goroutine).
func recoverTo(ctx context.Context, results chan<- decoded, where string) {
	if r := recover(); r != nil {
		err := exec.InternalError(where, r)
		select {
		case results <- decoded{err: err}:
		case <-ctx.Done():
		}
	}
}

func emitEnd(ctx context.Context, out exec.Emitter) error {
	if err := out.EmitWatermark(ctx, exec.MaxWatermark); err != nil && !errors.Is(err, exec.ErrStop) {
		return err
	}
	return nil
}

// commit stores pos as the group's offsets, skipping partitions this
// source already committed that far. A failed commit is counted (and
// returned), not fatal: at-least-once only re-reads a little more. It has
// its own short-lived client: the runner commits after Run has returned.
func (s *Source) commit(ctx context.Context, pos map[int32]int64) error {
	if s.t.cfg.group == "" {
		return nil
	}
	var os kadm.Offsets
	s.mu.Lock()
	for p, o := range pos {
		if c, ok := s.committed[p]; !ok || o > c {
			os.AddOffset(s.t.cfg.topic, p, o, -1)
		}
	}
	s.mu.Unlock()
	if len(os) == 0 {
		return nil
	}
	err := s.commitOffsets(ctx, os)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.commitErrs++
		return fmt.Errorf("kafka topic '%s': committing group '%s' offsets: %w", s.t.cfg.topic, s.t.cfg.group, err)
	}
	os.Each(func(o kadm.Offset) {
		if o.At > s.committed[o.Partition] {
			s.committed[o.Partition] = o.At
		}
	})
	return nil
}

func (s *Source) commitOffsets(ctx context.Context, os kadm.Offsets) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.t.cfg.brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return kadm.NewClient(cl).CommitAllOffsets(cctx, s.t.cfg.group, os)
}

// offsets resolves the start offset of every partition (and the end
// offsets for a bounded scan).
func (s *Source) offsets(ctx context.Context, adm *kadm.Client) (starts, ends map[int32]int64, err error) {
	cfg := s.t.cfg
	where := fmt.Sprintf("kafka topic '%s' on %v", cfg.topic, cfg.brokers)
	list := adm.ListEndOffsets
	if cfg.readCommitted {
		// The last stable offset: a read_committed reader sees nothing
		// past an open transaction.
		list = adm.ListCommittedOffsets
	}
	endL, err := list(ctx, cfg.topic)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: listing offsets: %w", where, err)
	}
	if err := endL.Error(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", where, err)
	}
	ends = map[int32]int64{}
	for _, lo := range endL[cfg.topic] {
		ends[lo.Partition] = lo.Offset
	}
	if len(ends) == 0 {
		return nil, nil, fmt.Errorf("%s: topic not found", where)
	}
	startL, err := adm.ListStartOffsets(ctx, cfg.topic)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: listing offsets: %w", where, err)
	}
	earliest := map[int32]int64{}
	for _, lo := range startL[cfg.topic] {
		earliest[lo.Partition] = lo.Offset
	}
	starts = map[int32]int64{}
	if s.restored != nil {
		// A checkpoint's offsets win over the group's and the startup
		// mode's; a partition added since starts at its earliest.
		for p := range ends {
			if o, ok := s.restored[p]; ok {
				starts[p] = max(o, earliest[p])
			} else {
				starts[p] = earliest[p]
			}
		}
		return starts, ends, nil
	}
	switch cfg.startup {
	case StartEarliest:
		starts = earliest
	case StartLatest:
		for p, o := range ends {
			starts[p] = o
		}
	case StartTimestamp:
		l, err := adm.ListOffsetsAfterMilli(ctx, cfg.startupMs, cfg.topic)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: listing offsets after %d: %w", where, cfg.startupMs, err)
		}
		for p := range ends {
			starts[p] = ends[p]
			if lo, ok := l.Lookup(cfg.topic, p); ok && lo.Err == nil && lo.Offset >= 0 {
				starts[p] = lo.Offset
			}
		}
	case StartGroup:
		committed, err := adm.FetchOffsetsForTopics(ctx, cfg.group, cfg.topic)
		if errors.Is(err, kerr.GroupIDNotFound) {
			committed, err = nil, nil // a new group: nothing committed yet
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: fetching group '%s' offsets: %w", where, cfg.group, err)
		}
		for p := range ends {
			if o, ok := committed.Lookup(cfg.topic, p); ok && o.Err == nil && o.At >= 0 {
				starts[p] = max(o.At, earliest[p])
				continue
			}
			switch cfg.reset {
			case "earliest":
				starts[p] = earliest[p]
			case "latest":
				starts[p] = ends[p]
			default:
				return nil, nil, fmt.Errorf("%s: group '%s' has no committed offset for partition %d and 'properties.auto.offset.reset' = 'none'", where, cfg.group, p)
			}
		}
	}
	return starts, ends, nil
}

// pollLoop fetches and hands each partition's records to its decoder in
// batches, dropping what lies past a bounded end.
func (s *Source) pollLoop(ctx context.Context, cl *kgo.Client, work map[int32]chan []*kgo.Record, ends map[int32]int64, results chan<- decoded) {
	bounded := s.t.cfg.bounded
	defer func() {
		for _, ch := range work {
			if ch != nil {
				close(ch)
			}
		}
	}()
	open := len(work)
	for open > 0 {
		fs := cl.PollRecords(ctx, 4*s.batchSize)
		if ctx.Err() != nil {
			return
		}
		var fatal error
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) || kgoRetriable(err) {
				return
			}
			if fatal == nil {
				fatal = fmt.Errorf("kafka topic '%s' partition %d: %w", topic, p, err)
			}
		})
		if fatal != nil {
			select {
			case results <- decoded{err: fatal}:
			case <-ctx.Done():
			}
			return
		}
		fs.EachPartition(func(ftp kgo.FetchTopicPartition) {
			ch, ok := work[ftp.Partition]
			if !ok || ch == nil {
				return
			}
			recs := ftp.Records
			done := false
			if bounded {
				end := ends[ftp.Partition]
				k := len(recs)
				for k > 0 && recs[k-1].Offset >= end {
					k--
				}
				recs = recs[:k]
				done = len(ftp.Records) > k || (k > 0 && recs[k-1].Offset+1 >= end)
			}
			for len(recs) > 0 {
				n := min(len(recs), s.batchSize)
				select {
				case ch <- recs[:n]:
				case <-ctx.Done():
					return
				}
				recs = recs[n:]
			}
			if done {
				close(ch)
				work[ftp.Partition] = nil
				open--
				cl.PauseFetchPartitions(map[string][]int32{s.t.cfg.topic: {ftp.Partition}})
			}
		})
	}
}

// kgoRetriable reports fetch errors the client retries by itself (a broker
// restarting, leadership moving).
func kgoRetriable(err error) bool {
	var re interface{ Retriable() bool }
	if errors.As(err, &re) && re.Retriable() {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// decodeLoop decodes one partition's record batches in order.
func (s *Source) decodeLoop(ctx context.Context, p int32, in <-chan []*kgo.Record, results chan<- decoded) {
	dec, err := s.decoder(p)
	send := func(r decoded) bool {
		select {
		case results <- r:
			return true
		case <-ctx.Done():
			if r.b != nil {
				r.b.Release()
			}
			return false
		}
	}
	if err != nil {
		send(decoded{p: p, err: err})
		return
	}
	values := make([][]byte, 0, s.batchSize)
	var data []*kgo.Record
	for recs := range in {
		last := recs[len(recs)-1]
		data = dataRecords(data[:0], recs)
		if len(data) == 0 {
			// Only transaction markers: the position moves on.
			if !send(decoded{p: p, next: last.Offset + 1, maxTs: minTs}) {
				return
			}
			continue
		}
		recs = data
		values = values[:0]
		maxTs := int64(minTs)
		for _, r := range recs {
			values = append(values, r.Value)
			maxTs = max(maxTs, r.Timestamp.UnixMilli())
		}
		res, err := dec.Decode(values)
		if err != nil {
			var re *jsonfmt.RecordError
			if errors.As(err, &re) {
				r := recs[re.Index]
				err = fmt.Errorf("kafka topic '%s' partition %d offset %d: %w (set 'on-error' = 'skip' to skip bad records)", r.Topic, r.Partition, r.Offset, err)
			}
			send(decoded{p: p, err: err})
			return
		}
		b, err := s.assemble(res, recs)
		if err != nil {
			send(decoded{p: p, err: err})
			return
		}
		if s.eventTime != nil {
			// The partition's clock is the table's event time, not the
			// records' Kafka timestamps (a producer may stamp them with
			// the time it sent them).
			maxTs = minTs
			if b != nil {
				us, ok, err := s.eventTime(b)
				if err != nil {
					b.Release()
					send(decoded{p: p, err: fmt.Errorf("kafka topic '%s' partition %d: event time: %w", last.Topic, last.Partition, err)})
					return
				}
				if ok {
					maxTs = floorDivMs(us)
				}
			}
		}
		if !send(decoded{p: p, b: b, next: last.Offset + 1, maxTs: maxTs}) {
			return
		}
	}
	// The poll loop closes a partition's input at its bounded end (or at
	// shutdown, when this send is dropped).
	send(decoded{p: p, next: -1, maxTs: minTs, done: true})
}

// dataRecords appends the records of recs that are not transaction markers
// to out.
func dataRecords(out, recs []*kgo.Record) []*kgo.Record {
	for _, r := range recs {
		if !r.Attrs.IsControl() {
			out = append(out, r)
		}
	}
	return out
}

// Report is the source's decode statistics for EXPLAIN ANALYZE, and the
// failed offset commits.
func (s *Source) Report() exec.OperatorReport {
	r := s.Stats().Report()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commitErrs > 0 {
		r.Counters = append(r.Counters, exec.NamedCount{Name: "failed offset commits", Value: s.commitErrs})
	}
	return r
}
