package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/clink-sql/clink/connectors/kafka"
)

// topicList collects repeated --topic name:partitions flags.
type topicList []string

func (t *topicList) String() string     { return strings.Join(*t, ",") }
func (t *topicList) Set(v string) error { *t = append(*t, v); return nil }

// runBroker is `clinksh kafka-broker`: only the embedded Kafka broker (and,
// with --nexmark-rate, the nexmark topic filler) until SIGINT or SIGTERM, so
// kcat, other Kafka clients and other clinksh processes can use it.
func runBroker(args []string, stderr *os.File) int {
	fs := flag.NewFlagSet("clinksh kafka-broker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:9092", "address to listen on")
	rate := fs.Int("nexmark-rate", 0, "events/s the nexmark generator produces to topic 'nexmark' (0: none)")
	dataDir := fs.String("data-dir", "", "directory that keeps the broker's data across restarts (a kill -9 included)")
	retention := fs.Duration("retention", 0, "drop records older than this, e.g. 10m (0: keep them)")
	retentionBytes := fs.Int64("retention-bytes", 0, "keep at most this many bytes per partition (0: no bound)")
	var topics topicList
	fs.Var(&topics, "topic", "a topic to create, as name:partitions (repeatable)")
	setUsage(fs, "clinksh kafka-broker [flags]",
		"Runs only the embedded Kafka broker (and, with --nexmark-rate, the nexmark\n"+
			"topic filler) until SIGINT or SIGTERM, for kcat, other Kafka clients and\n"+
			"other clinksh processes.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := kafka.RunBroker(ctx, kafka.BrokerOptions{
		Listen: *listen, NexmarkRate: *rate, Topics: topics, DataDir: *dataDir,
		Retention: kafka.Retention{Time: *retention, Bytes: *retentionBytes},
		Ready:     func(addr string) { fmt.Fprintf(stderr, "clink: Kafka broker on %s\n", addr) },
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "clinksh kafka-broker: %s\n", err)
		return exitError
	}
	return exitOK
}
