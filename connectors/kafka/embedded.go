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
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

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
}

// Embedded is an in-process Kafka broker (franz-go's kfake, which speaks
// the real wire protocol: kcat and any client can use it).
type Embedded struct {
	c    *kfake.Cluster
	addr string
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
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(1),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, listen) }),
	}
	if opts.DataDir != "" {
		kopts = append(kopts, kfake.DataDir(opts.DataDir))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: starting the embedded broker on %s: %w", listen, err)
	}
	e := &Embedded{c: c, addr: c.ListenAddrs()[0]}
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
func (e *Embedded) Close() { e.c.Close() }

// CreateTopic creates a topic; an existing one is left as it is.
func (e *Embedded) CreateTopic(ctx context.Context, name string, partitions int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		return fmt.Errorf("kafka: creating topic '%s': %w", name, err)
	}
	return nil
}

// BrokerOptions configure RunBroker (clinksh kafka-broker).
type BrokerOptions struct {
	Listen      string
	NexmarkRate int      // events/s produced to the 'nexmark' topic; 0: none
	Topics      []string // "name:partitions"
	DataDir     string
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
	e, err := StartEmbedded(ctx, EmbeddedOptions{Listen: opts.Listen, DataDir: opts.DataDir, Topics: topics})
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
