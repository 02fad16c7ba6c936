package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"strconv"
	"testing"
	"time"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// zmtpGreetingNull is a ZMTP 3.0 greeting with the NULL mechanism, as a
// client sends it.
func zmtpGreetingNull() []byte {
	g := make([]byte, zmtpGreeting)
	g[0], g[9] = 0xff, 0x7f
	g[10], g[11] = 3, 0
	copy(g[12:], "NULL")
	return g
}

// readyDealer is the NULL mechanism's READY command of a DEALER socket,
// which completes the handshake with a ROUTER or a REP: the frames that
// follow reach the library's message reader.
func readyDealer() []byte {
	body := []byte{5, 'R', 'E', 'A', 'D', 'Y', 11}
	body = append(body, "Socket-Type"...)
	body = append(body, 0, 0, 0, 6)
	body = append(body, "DEALER"...)
	return append([]byte{flagCommand, byte(len(body))}, body...)
}

// longFrame is a frame header claiming size bytes.
func longFrame(flags byte, size uint64) []byte {
	h := make([]byte, 9)
	h[0] = flags | flagLong
	binary.BigEndian.PutUint64(h[1:], size)
	return h
}

// Issue 19's repro: one frame header claiming 2^62 bytes (or 4 GB) killed
// the kernel in go-zeromq's reader (makeslice: len out of range), on the
// shell, control and heartbeat ports alike. Each claim now cuts only that
// connection, before anything is allocated, and the kernel goes on
// answering heartbeats.
func TestOversizedFramesDoNotKillTheKernel(t *testing.T) {
	ci := listenForTest(t)

	attacks := map[string][]byte{
		"2^62 bytes":                 longFrame(0, 1<<62),
		"4 GB":                       longFrame(0, 4<<30),
		"2^64-1 bytes":               longFrame(flagCommand, ^uint64(0)),
		"frames that add up too far": longFrame(flagMore, MaxMessageBytes/2+1),
	}
	for name, frame := range attacks {
		for _, port := range []int{ci.ShellPort, ci.ControlPort, ci.HBPort} {
			stream := [][]byte{append(append(zmtpGreetingNull(), readyDealer()...), frame...)}
			if name == "frames that add up too far" {
				// The first half arrives in full; the second frame's
				// header takes the message over the limit.
				stream = append(stream, make([]byte, MaxMessageBytes/2+1), longFrame(0, MaxMessageBytes/2+1))
			}
			expectCut(t, ci, port, name, stream...)
		}
	}
	// The kernel lives: a heartbeat comes back.
	ping(t, ci)
}

// A well-formed stream passes the guard byte for byte, whatever the read
// sizes.
func TestFrameGuardPassesValidFrames(t *testing.T) {
	var stream []byte
	stream = append(stream, zmtpGreetingNull()...)
	stream = append(stream, flagCommand, 5, 'R', 'E', 'A', 'D', 'Y')
	stream = append(stream, flagMore, 3, 'a', 'b', 'c')
	stream = append(stream, longFrame(0, 300)...)
	stream = append(stream, make([]byte, 300)...)
	stream = append(stream, 0, 0) // an empty frame
	for _, piece := range []int{1, 2, 7, 64, 1000} {
		g := newFrameGuard(nil, 1000)
		for i := 0; i < len(stream); i += piece {
			if err := g.scan(stream[i:min(i+piece, len(stream))]); err != nil {
				t.Fatalf("piece %d at %d: %v", piece, i, err)
			}
		}
		if g.state != inFlags || g.message != 0 {
			t.Fatalf("piece %d: ends in state %d with %d message bytes", piece, g.state, g.message)
		}
	}
	g := newFrameGuard(nil, 1000)
	over := append(append(zmtpGreetingNull(), flagMore, 200), make([]byte, 200)...)
	over = append(over, longFrame(0, 801)...)
	var tooLarge *FrameTooLargeError
	if err := g.scan(over); !errors.As(err, &tooLarge) || tooLarge.Size != 1001 {
		t.Fatalf("a message of 1001 bytes under a limit of 1000: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// expectCut sends stream (its pieces in turn) to port and fails t unless
// the kernel closes the connection.
func expectCut(t *testing.T, ci ConnectionInfo, port int, name string, stream ...[]byte) {
	t.Helper()
	c, err := net.Dial("tcp", net.JoinHostPort(ci.IP, itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, piece := range stream {
		// Only the first piece must arrive whole: the kernel may cut the
		// connection while later ones are written.
		if _, err := c.Write(piece); err != nil && i == 0 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, c)
	if ne := (net.Error)(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s on port %d: the connection stayed open", name, port)
	}
}

// listenForTest binds the kernel's sockets on free local ports, answering
// heartbeats, until the test ends.
func listenForTest(t *testing.T) ConnectionInfo {
	t.Helper()
	ci := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", ShellPort: freePort(t), ControlPort: freePort(t),
		StdinPort: freePort(t), IOPubPort: freePort(t), HBPort: freePort(t)}
	ctx, cancel := context.WithCancel(t.Context())
	srv, err := Listen(ctx, ci, log.New(io.Discard, "", 0))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); srv.Close() })
	go srv.Heartbeat(ctx)
	return ci
}

// FuzzSockets' finding: a READY command naming a socket type go-zeromq
// does not know ("EALER") panicked its accept goroutine and killed the
// kernel; so did a READY without a Socket-Type and one whose property
// length runs past the command. Each now cuts only its connection, and
// the heartbeat answers after all of them, on every port.
func TestHandshakesThatPanicZmq4AreRefused(t *testing.T) {
	ci := listenForTest(t)
	ready := func(body string) []byte {
		cmd := append([]byte{5}, "READY"+body...)
		return append([]byte{flagCommand, byte(len(cmd))}, cmd...)
	}
	attacks := map[string][]byte{
		"unknown socket type":    ready("\x0bSocket-Type\x00\x00\x00\x05EALER"),
		"no socket type":         ready(""),
		"property past its end":  ready("\x0bSocket-Type\x00\x00"),
		"value length past end":  ready("\x0bSocket-Type\x00\x00\x00\x09DEALER"),
		"two socket types":       ready("\x0bSocket-Type\x00\x00\x00\x06DEALER\x0bsocket-type\x00\x00\x00\x02XX"),
		"first command too long": append([]byte{flagCommand | flagLong}, binary.BigEndian.AppendUint64(nil, maxHandshake+1)...),
	}
	for name, cmd := range attacks {
		for _, port := range []int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.HBPort} {
			expectCut(t, ci, port, name, append(zmtpGreetingNull(), cmd...))
		}
	}
	ping(t, ci)
}
