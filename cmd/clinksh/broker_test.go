package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `clinksh kafka-broker` runs a broker that another clinksh process reads
// over TCP: the nexmark filler's records come back through a kafka table.
func TestE2EKafkaBrokerSubcommand(t *testing.T) {
	cmd := exec.Command(clinkshBinary(t), "kafka-broker", "--listen", "127.0.0.1:0", "--nexmark-rate", "2000", "--topic", "other:2")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	addrCh := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`Kafka broker on (\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrCh <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrCh:
	case <-time.After(20 * time.Second):
		t.Fatal("the broker did not report its address")
	}
	script := fmt.Sprintf(`CREATE TABLE nx (event_type INT) WITH ('connector' = 'kafka', 'topic' = 'nexmark',
  'properties.bootstrap.servers' = '%s', 'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
SELECT COUNT(*) AS n FROM (SELECT event_type FROM nx LIMIT 50) t;`, addr)
	r := runClinksh(t, "", "--format", "csv", "-c", script)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := strings.TrimSpace(r.stdout); got != "n\n50" {
		t.Fatalf("got %q, want 50 records read from the broker", got)
	}
}
