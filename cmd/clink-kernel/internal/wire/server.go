package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Channel names the request sockets a message can arrive on.
type Channel int

const (
	Shell Channel = iota
	Control
	Stdin
)

func (c Channel) String() string {
	switch c {
	case Shell:
		return "shell"
	case Control:
		return "control"
	}
	return "stdin"
}

// Server owns the kernel's five sockets. Every send goes through a
// per-socket lock, because a reply, an iopub message from the running query
// and a control reply can be produced on different goroutines.
type Server struct {
	signer  *Signer
	session string
	log     *log.Logger

	router [3]zmq4.Socket // shell, control, stdin
	iopub  zmq4.Socket
	hb     zmq4.Socket
	mu     [4]sync.Mutex // one per sending socket: shell, control, stdin, iopub

	closeOnce sync.Once
	cancel    context.CancelFunc
}

// Listen binds the five sockets of ci. On an error every socket already
// bound is closed again, so the ports are free.
func Listen(ctx context.Context, ci ConnectionInfo, logger *log.Logger) (*Server, error) {
	if err := registerGuard(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{
		signer:  NewSigner([]byte(ci.Key), 0),
		session: NewID(),
		log:     logger,
		cancel:  cancel,
	}
	// A heartbeat or a reply must not wait minutes on a vanished peer.
	opt := zmq4.WithTimeout(10 * time.Second)
	s.router[Shell] = zmq4.NewRouter(ctx, opt)
	s.router[Control] = zmq4.NewRouter(ctx, opt)
	s.router[Stdin] = zmq4.NewRouter(ctx, opt)
	s.iopub = zmq4.NewPub(ctx, opt)
	s.hb = zmq4.NewRep(ctx, opt)
	binds := []struct {
		name string
		sck  zmq4.Socket
		port int
	}{
		{"shell", s.router[Shell], ci.ShellPort},
		{"control", s.router[Control], ci.ControlPort},
		{"stdin", s.router[Stdin], ci.StdinPort},
		{"iopub", s.iopub, ci.IOPubPort},
		{"hb", s.hb, ci.HBPort},
	}
	for _, b := range binds {
		if err := b.sck.Listen(ci.endpoint(b.port)); err != nil {
			s.Close()
			return nil, fmt.Errorf("%s socket on %s: %w", b.name, ci.endpoint(b.port), err)
		}
	}
	return s, nil
}

// Session is the kernel's session id, sent in every header.
func (s *Server) Session() string { return s.session }

// Close closes every socket, freeing the ports (a restarting client binds a
// new kernel to the same ones). It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.cancel()
		for _, sck := range []zmq4.Socket{s.router[Shell], s.router[Control], s.router[Stdin], s.iopub, s.hb} {
			if sck != nil {
				if e := sck.Close(); e != nil && err == nil {
					err = e
				}
			}
		}
	})
	return err
}

// Receive reads requests from ch and hands the valid ones to handle, in
// order, until the socket is closed or ctx ends. Messages that fail
// verification are logged and dropped; the loop goes on.
func (s *Server) Receive(ctx context.Context, ch Channel, handle func(*Message)) {
	sck := s.router[ch]
	for {
		raw, err := sck.Recv()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			s.log.Printf("%s: receive: %v", ch, err)
			if errors.Is(err, context.DeadlineExceeded) {
				continue
			}
			return
		}
		m, err := s.signer.Decode(raw.Frames)
		if err != nil {
			s.log.Printf("%s: dropped message (%d frames): %v", ch, len(raw.Frames), err)
			continue
		}
		handle(m)
	}
}

// Heartbeat echoes every ping on the hb socket until it is closed. It runs
// on its own goroutine so a long query never delays it.
func (s *Server) Heartbeat(ctx context.Context) {
	for {
		m, err := s.hb.Recv()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			continue
		}
		if err := s.hb.Send(m); err != nil && ctx.Err() == nil {
			s.log.Printf("hb: send: %v", err)
		}
	}
}

// NewMessage builds an outgoing message whose parent is parent (nil for
// none), serialising header and content now.
func (s *Server) NewMessage(parent *Message, msgType string, content any) (*Message, error) {
	h := Header{
		MsgID:    NewID(),
		Session:  s.session,
		Username: "clink",
		Date:     FormatDate(time.Now()),
		MsgType:  msgType,
		Version:  ProtocolVersion,
	}
	rawHeader, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("%s content: %w", msgType, err)
	}
	m := &Message{Header: h, RawHeader: rawHeader, Content: body, Metadata: json.RawMessage("{}"), ParentHeader: json.RawMessage("{}")}
	if parent != nil {
		m.ParentHeader = parent.RawHeader
		m.Identities = parent.Identities
	}
	return m, nil
}

// Reply sends content as msgType on ch, to the peer that sent req.
func (s *Server) Reply(ch Channel, req *Message, msgType string, content any) error {
	m, err := s.NewMessage(req, msgType, content)
	if err != nil {
		return err
	}
	return s.send(int(ch), s.router[ch], m)
}

// Publish broadcasts content as msgType on iopub with parent as its parent.
func (s *Server) Publish(parent *Message, msgType string, content any) error {
	m, err := s.NewMessage(parent, msgType, content)
	if err != nil {
		return err
	}
	// The topic frame replaces the routing identities on iopub.
	m.Identities = [][]byte{[]byte("kernel." + s.session + "." + msgType)}
	return s.send(3, s.iopub, m)
}

func (s *Server) send(lock int, sck zmq4.Socket, m *Message) error {
	frames := s.signer.Encode(m)
	s.mu[lock].Lock()
	defer s.mu[lock].Unlock()
	if err := sck.Send(zmq4.NewMsgFrom(frames...)); err != nil {
		return fmt.Errorf("send %s: %w", m.Header.MsgType, err)
	}
	return nil
}
