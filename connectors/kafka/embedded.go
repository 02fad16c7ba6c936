package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/clink-sql/clink/connectors"
	"github.com/clink-sql/clink/connectors/jsonfmt"
	"github.com/clink-sql/clink/connectors/nexmark"
	"github.com/clink-sql/clink/exec"
)

// EmbeddedOptions configure an in-process broker.
type EmbeddedOptions struct {
	// Listen is the address to listen on; "" means 127.0.0.1:0.
	Listen string
	// DataDir, when set, persists topics, offsets and groups there (kfake's
	// DataDir): a broker restarted on the same directory has the same data.
	DataDir string
	// Topics to create, as "name" or "name:partitions".
	Topics []string
	// Retention bounds what every topic keeps (Kafka's retention.ms and
	// retention.bytes, per partition); zero values keep everything.
	Retention Retention
}

// Retention is a topic's bound on kept records: the oldest are dropped
// once they are older than Time or the partition holds more than Bytes.
// The broker checks every CheckEvery (default a tenth of Time, at most a
// minute).
type Retention struct {
	Time       time.Duration
	Bytes      int64
	CheckEvery time.Duration
}

// configs is the retention as topic configs (nil for none).
func (r Retention) configs() map[string]string {
	if r.Time <= 0 && r.Bytes <= 0 {
		return nil
	}
	c := map[string]string{}
	if r.Time > 0 {
		c["retention.ms"] = strconv.FormatInt(r.Time.Milliseconds(), 10)
	}
	if r.Bytes > 0 {
		c["retention.bytes"] = strconv.FormatInt(r.Bytes, 10)
	}
	return c
}

// checkEvery is how often the broker applies the retention.
func (r Retention) checkEvery() time.Duration {
	if r.CheckEvery > 0 {
		return r.CheckEvery
	}
	if r.Time > 0 {
		return min(max(r.Time/10, time.Second), time.Minute)
	}
	return 10 * time.Second
}

// Embedded is an in-process Kafka broker (franz-go's kfake, which speaks
// the real wire protocol: kcat and any client can use it).
//
// With a DataDir every acknowledged record is on disk before its
// acknowledgement (kfake writes each produced batch to its segment file in
// the produce handler; the page cache keeps it through a kill -9 of the
// process), and so is every topic before a client can produce to it: see
// autoCreate.
type Embedded struct {
	c         *kfake.Cluster
	addr      string
	topicCfgs map[string]string
	dataDir   string
}

// StartEmbedded starts a broker. Topics are auto-created on first use with
// one partition, like Kafka's default num.partitions.
func StartEmbedded(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	kopts := []kfake.Opt{
		kfake.NumBrokers(1),
		// No kfake.AllowAutoTopicCreation: kfake's own auto-creation
		// writes topics.json only at a clean shutdown, so a kill -9 lost
		// every auto-created topic (and with it all its records, whose
		// segments stayed on disk unread). autoCreate creates them instead.
		kfake.DefaultNumPartitions(1),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, listen) }),
	}
	var txns []openTxn
	if opts.DataDir != "" {
		kopts = append(kopts, kfake.DataDir(opts.DataDir))
		crashed, err := markRunning(opts.DataDir)
		if err != nil {
			return nil, fmt.Errorf("kafka: data directory '%s': %w", opts.DataDir, err)
		}
		if crashed {
			if txns, err = openTxns(opts.DataDir); err != nil {
				return nil, fmt.Errorf("kafka: data directory '%s': reading the log: %w", opts.DataDir, err)
			}
		}
	}
	if cfgs := opts.Retention.configs(); cfgs != nil {
		// kfake applies retention on its cleaner's tick (an hour by
		// default).
		kopts = append(kopts, kfake.BrokerConfigs(map[string]string{
			"log.cleaner.backoff.ms": strconv.FormatInt(opts.Retention.checkEvery().Milliseconds(), 10)}))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: starting the embedded broker on %s: %w", listen, err)
	}
	e := &Embedded{c: c, addr: c.ListenAddrs()[0], topicCfgs: opts.Retention.configs(), dataDir: opts.DataDir}
	c.ControlKey(kmsg.Metadata.Int16(), e.autoCreate)
	if len(txns) > 0 {
		// The broker listens already; the gate holds what clients send
		// until the markers are written (a client can only slip a request
		// in between NewCluster and this line).
		ready := make(chan struct{})
		gateUntil(c, ready)
		err := abortOpen(ctx, e.addr, txns)
		close(ready)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("kafka: data directory '%s': aborting the transactions a crash left open: %w", opts.DataDir, err)
		}
	}
	for _, t := range opts.Topics {
		name, parts, err := ParseTopic(t)
		if err != nil {
			e.Close()
			return nil, err
		}
		if err := e.CreateTopic(ctx, name, parts); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

// ParseTopic parses "name" or "name:partitions".
func ParseTopic(s string) (string, int32, error) {
	name, ps, ok := strings.Cut(s, ":")
	if name == "" {
		return "", 0, fmt.Errorf("kafka: topic '%s': empty name", s)
	}
	if !ok {
		return name, 1, nil
	}
	n, err := strconv.Atoi(ps)
	if err != nil || n < 1 || n > 10000 {
		return "", 0, fmt.Errorf("kafka: topic '%s': partitions must be 1..10000", s)
	}
	return name, int32(n), nil
}

// Addr is the broker's host:port.
func (e *Embedded) Addr() string { return e.addr }

// Close stops the broker (persisting its state when it has a DataDir).
func (e *Embedded) Close() {
	e.c.Close()
	if e.dataDir != "" {
		clearRunning(e.dataDir)
	}
}

// CreateTopic creates a topic (persisted at once with a DataDir); an
// existing one is left as it is.
func (e *Embedded) CreateTopic(ctx context.Context, name string, partitions int32) error {
	if e.c.TopicInfo(name) != nil {
		return nil
	}
	if err := e.c.CreateTopic(name, partitions, e.topicCfgs); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafka: creating topic '%s': %w", name, err)
	}
	return nil
}

// autoCreate is the broker's auto.create.topics.enable: a metadata request
// that asks for auto-creation gets its missing topics created through
// kfake's CreateTopic, which writes topics.json (atomically, fsynced)
// before the request is answered, so no client learns of a topic (and no
// record is acknowledged in it) that a crash could forget. It only
// observes: kfake answers the request itself.
func (e *Embedded) autoCreate(req kmsg.Request) (kmsg.Response, error, bool) {
	m, ok := req.(*kmsg.MetadataRequest)
	if !ok || !m.AllowAutoTopicCreation {
		return nil, nil, false
	}
	for _, t := range m.Topics {
		if t.Topic == nil || *t.Topic == "" {
			continue // asked by topic ID: it exists or it does not
		}
		// Control functions may call the cluster's admin functions:
		// kfake serves them while one runs. An invalid name fails here
		// and kfake answers UNKNOWN_TOPIC_OR_PARTITION.
		if e.c.TopicInfo(*t.Topic) == nil {
			_ = e.c.CreateTopic(*t.Topic, -1, e.topicCfgs)
		}
	}
	return nil, nil, false
}

// BrokerOptions configure RunBroker (clinksh kafka-broker).
type BrokerOptions struct {
	Listen      string
	NexmarkRate int      // events/s produced to the 'nexmark' topic; 0: none
	Topics      []string // "name:partitions"
	DataDir     string
	Retention   Retention
	// Ready, when set, is called with the address once the broker listens.
	Ready func(addr string)
}

// RunBroker runs a broker (and the nexmark filler when NexmarkRate > 0)
// until ctx ends.
func RunBroker(ctx context.Context, opts BrokerOptions) error {
	topics := opts.Topics
	if opts.NexmarkRate > 0 {
		topics = append(topics, NexmarkTopic+":1")
	}
	e, err := StartEmbedded(ctx, EmbeddedOptions{Listen: opts.Listen, DataDir: opts.DataDir, Topics: topics, Retention: opts.Retention})
	if err != nil {
		return err
	}
	defer e.Close()
	if opts.Ready != nil {
		opts.Ready(e.Addr())
	}
	if opts.NexmarkRate > 0 {
		err := FillNexmark(ctx, e.Addr(), NexmarkTopic, opts.NexmarkRate)
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	<-ctx.Done()
	return nil
}

// NexmarkTopic is the demo topic the filler writes.
const NexmarkTopic = "nexmark"

// FillNexmark produces nexmark events (the wide table's JSON shape:
// event_type, person, auction, bid, dateTime) to topic at rate events/s
// until ctx ends. Each record's timestamp is the event's dateTime, so the
// source's watermark follows event time.
func FillNexmark(ctx context.Context, brokers, topic string, rate int) error {
	tbl, err := nexmark.NewTable(map[string]string{"table": "nexmark",
		"first-event.rate": strconv.Itoa(rate), "next-event.rate": strconv.Itoa(rate)}, nil)
	if err != nil {
		return err
	}
	src, err := tbl.OpenSource(connectors.ScanSpec{BatchSize: 1024})
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic),
		kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	p := &producerEmitter{cl: cl, enc: jsonfmt.NewEncoder(src.Schema())}
	dt := src.Schema().FieldIndices("dateTime")
	if len(dt) == 1 {
		p.tsCol = dt[0]
	} else {
		p.tsCol = -1
	}
	return src.Run(ctx, p)
}

// producerEmitter produces every emitted row as one JSON record.
type producerEmitter struct {
	cl    *kgo.Client
	enc   *jsonfmt.Encoder
	tsCol int
}

func (p *producerEmitter) Emit(ctx context.Context, b *exec.Batch) error {
	rec := b.Record()
	var ts *array.Timestamp
	if p.tsCol >= 0 {
		ts, _ = rec.Column(p.tsCol).(*array.Timestamp)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		r := &kgo.Record{Value: p.enc.AppendRow(nil, rec, i)}
		if ts != nil && ts.IsValid(i) {
			r.Timestamp = time.UnixMilli(int64(ts.Value(i))) // TIMESTAMP(3)
		}
		p.cl.Produce(ctx, r, nil)
	}
	return nil
}

func (p *producerEmitter) EmitWatermark(context.Context, int64) error { return nil }
