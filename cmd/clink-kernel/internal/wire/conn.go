package wire

import (
	"encoding/json"
	"fmt"
	"os"
)

// ConnectionInfo is the connection file Jupyter writes for a kernel.
type ConnectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	ControlPort     int    `json:"control_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

// ReadConnectionFile reads and checks a connection file.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	var ci ConnectionInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return ci, fmt.Errorf("connection file: %w", err)
	}
	if err := json.Unmarshal(b, &ci); err != nil {
		return ci, fmt.Errorf("connection file %s: %w", path, err)
	}
	if ci.Transport == "" {
		ci.Transport = "tcp"
	}
	if ci.IP == "" {
		ci.IP = "127.0.0.1"
	}
	if ci.Transport != "tcp" && ci.Transport != "ipc" {
		return ci, fmt.Errorf("connection file %s: transport %q is not supported (tcp or ipc)", path, ci.Transport)
	}
	if ci.SignatureScheme != "" && ci.SignatureScheme != "hmac-sha256" {
		return ci, fmt.Errorf("connection file %s: signature_scheme %q is not supported (hmac-sha256)", path, ci.SignatureScheme)
	}
	return ci, nil
}

// endpoint is the ZeroMQ address of one port, on the transports that
// refuse oversized frames (guard.go). For ipc, Jupyter names the socket
// file "<ip>-<port>".
func (ci ConnectionInfo) endpoint(port int) string {
	if ci.Transport == "ipc" {
		return fmt.Sprintf("%s://%s-%d", guardedIPC, ci.IP, port)
	}
	return fmt.Sprintf("%s://%s:%d", guardedTCP, ci.IP, port)
}
