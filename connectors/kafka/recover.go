package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Crash recovery of transactions in the embedded broker's data directory.
//
// kfake, started on the log of a broker that crashed, treats a transaction
// without an end marker as aborted, but only in memory: it writes no abort
// marker. After the next crash the transaction's records are unmarked
// again, and the first later marker of the same producer (its next,
// committed transaction) then commits them too: a read_committed reader
// saw records of a transaction that was never committed. The broker writes
// the missing abort markers itself, through kfake's WriteTxnMarkers, before
// it serves any other request.

// openTxn is a transaction whose records in a partition have no end marker.
type openTxn struct {
	topic     string
	partition int32
	pid       int64
	epoch     int16
}

// runningMark is the file a running broker keeps in its data directory;
// finding it at start means the last broker on the directory did not shut
// down cleanly.
const runningMark = "clink-broker.running"

// markRunning creates the running mark and reports whether one was
// already there (the previous broker crashed).
func markRunning(dataDir string) (crashed bool, err error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return false, err
	}
	path := filepath.Join(dataDir, runningMark)
	_, err = os.Stat(path)
	crashed = err == nil
	return crashed, os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

func clearRunning(dataDir string) { _ = os.Remove(filepath.Join(dataDir, runningMark)) }

// openTxns scans every partition log under dataDir (kfake's layout:
// partitions/<url-escaped topic>-<partition>/<base offset>.dat, each a run
// of Kafka RecordBatches) for transactions with no end marker. A batch that
// fails its CRC ends the partition's log, as it ends kfake's.
func openTxns(dataDir string) ([]openTxn, error) {
	parts, err := os.ReadDir(filepath.Join(dataDir, "partitions"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []openTxn
	for _, d := range parts {
		i := strings.LastIndexByte(d.Name(), '-')
		if !d.IsDir() || i < 0 {
			continue
		}
		topic, err := url.PathUnescape(d.Name()[:i])
		p, perr := strconv.ParseInt(d.Name()[i+1:], 10, 32)
		if err != nil || perr != nil {
			continue
		}
		open, err := openTxnsIn(filepath.Join(dataDir, "partitions", d.Name()))
		if err != nil {
			return nil, fmt.Errorf("partition %s-%d: %w", topic, p, err)
		}
		for pid, epoch := range open {
			out = append(out, openTxn{topic: topic, partition: int32(p), pid: pid, epoch: epoch})
		}
	}
	return out, nil
}

// openTxnsIn returns the producers (and their epochs) whose last
// transactional batch in one partition's segments has no marker after it.
func openTxnsIn(dir string) (map[int64]int16, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var bases []int64
	for _, e := range ents {
		if b, ok := strings.CutSuffix(e.Name(), ".dat"); ok {
			if n, err := strconv.ParseInt(b, 10, 64); err == nil {
				bases = append(bases, n)
			}
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	open := map[int64]int16{}
	for _, base := range bases {
		if err := scanSegment(filepath.Join(dir, strconv.FormatInt(base, 10)+".dat"), open); err != nil {
			return nil, err
		}
	}
	return open, nil
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// RecordBatch header offsets (Kafka's v2 format): base offset (8), length
// (4), leader epoch (4), magic (1), CRC (4) over everything after it,
// attributes (2), ..., producer id at 43 (8), producer epoch at 51 (2).
const (
	batchCRC      = 17
	batchAttrs    = 21
	batchPID      = 43
	batchEpoch    = 51
	batchMinBytes = 61
	attrTxn       = 0x10
	attrControl   = 0x20
)

func scanSegment(path string, open map[int64]int16) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var buf []byte
	head := make([]byte, 12)
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			return nil // the end, or a torn header
		}
		n := int(binary.BigEndian.Uint32(head[8:12]))
		if n < batchMinBytes-12 || n > 1<<30 {
			return nil
		}
		buf = append(buf[:0], head...)
		buf = append(buf, make([]byte, n)...)
		if _, err := io.ReadFull(r, buf[12:]); err != nil {
			return nil // a torn batch: kfake truncates it
		}
		if crc32.Checksum(buf[batchAttrs:], crc32c) != binary.BigEndian.Uint32(buf[batchCRC:batchAttrs]) {
			return nil
		}
		attrs := binary.BigEndian.Uint16(buf[batchAttrs:])
		pid := int64(binary.BigEndian.Uint64(buf[batchPID:]))
		epoch := int16(binary.BigEndian.Uint16(buf[batchEpoch:]))
		switch {
		case attrs&attrControl != 0:
			delete(open, pid)
		case attrs&attrTxn != 0:
			if e, ok := open[pid]; !ok || epoch > e {
				open[pid] = epoch
			}
		}
	}
}

// gateUntil holds every request but the ones abortOpen needs until ready
// is closed, so no client writes (or reads a partition's stable offset)
// before the abort markers are down.
func gateUntil(c *kfake.Cluster, ready <-chan struct{}) {
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		switch kmsg.Key(req.Key()) {
		case kmsg.ApiVersions, kmsg.Metadata, kmsg.WriteTxnMarkers:
			return nil, nil, false
		}
		select {
		case <-ready:
			c.DropControl()
			return nil, nil, false
		default:
		}
		c.SleepControl(func() { <-ready })
		return nil, nil, false
	})
}

// abortOpen writes an abort marker for each open transaction, with the
// producer's epoch bumped as a coordinator aborting it would.
func abortOpen(ctx context.Context, addr string, txns []openTxn) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, t := range txns {
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = t.pid, t.epoch+1, false
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = t.topic, []int32{t.partition}
		m.Topics = append(m.Topics, mt)
		req.Markers = append(req.Markers, m)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return fmt.Errorf("aborting producer %d's transaction in %s-%d: error code %d", m.ProducerID, t.Topic, p.Partition, p.ErrorCode)
				}
			}
		}
	}
	return nil
}
