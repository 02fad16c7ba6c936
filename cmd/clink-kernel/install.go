package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// specLocation parses the location flags shared by install and uninstall
// and returns the kernel's directory (…/share/jupyter/kernels/<name>).
func specLocation(cmd string, args []string) (string, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	user := fs.Bool("user", false, "install for the current user ($JUPYTER_DATA_DIR or ~/.local/share/jupyter; the default)")
	sysPrefix := fs.Bool("sys-prefix", false, "install into the Python environment's sys.prefix/share/jupyter")
	prefix := fs.String("prefix", "", "install into `P`/share/jupyter")
	name := fs.String("name", "clink", "kernel `name`")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	n := 0
	for _, set := range []bool{*user, *sysPrefix, *prefix != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", fmt.Errorf("%s: --user, --sys-prefix and --prefix exclude each other", cmd)
	}
	if *name == "" || strings.ContainsAny(*name, `/\ `) {
		return "", fmt.Errorf("%s: invalid kernel name %q", cmd, *name)
	}
	var data string
	switch {
	case *prefix != "":
		p, err := filepath.Abs(*prefix)
		if err != nil {
			return "", err
		}
		data = filepath.Join(p, "share", "jupyter")
	case *sysPrefix:
		p, err := pythonPrefix()
		if err != nil {
			return "", err
		}
		data = filepath.Join(p, "share", "jupyter")
	default:
		data = os.Getenv("JUPYTER_DATA_DIR")
		if data == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%s: no home directory for --user: %w", cmd, err)
			}
			data = filepath.Join(home, ".local", "share", "jupyter")
		}
	}
	return filepath.Join(data, "kernels", strings.ToLower(*name)), nil
}

// pythonPrefix asks the Python that runs Jupyter for its sys.prefix.
func pythonPrefix() (string, error) {
	py := os.Getenv("CLINK_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
		if _, err := os.Stat(py); err != nil {
			py = "python3"
		}
	}
	out, err := exec.Command(py, "-c", "import sys; print(sys.prefix)").Output()
	if err != nil {
		return "", fmt.Errorf("--sys-prefix: asking %s for sys.prefix: %w", py, err)
	}
	return strings.TrimSpace(string(out)), nil
}

type kernelSpec struct {
	Argv          []string       `json:"argv"`
	DisplayName   string         `json:"display_name"`
	Language      string         `json:"language"`
	InterruptMode string         `json:"interrupt_mode"`
	Env           map[string]any `json:"env"`
	Metadata      map[string]any `json:"metadata"`
}

func install(args []string, stdout io.Writer) error {
	dir, err := specLocation("install", args)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install: locating the clink-kernel binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	spec := kernelSpec{
		Argv:          []string{exe, "{connection_file}"},
		DisplayName:   "clink SQL",
		Language:      "sql",
		InterruptMode: "message",
		Env:           map[string]any{},
		Metadata:      map[string]any{"debugger": false, "clink": map[string]any{"version": "0.1.0"}},
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	files := map[string][]byte{"kernel.json": append(b, '\n')}
	for _, size := range []int{32, 64} {
		files[fmt.Sprintf("logo-%dx%d.png", size, size)] = logo(size)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("install: %w", err)
		}
	}
	fmt.Fprintf(stdout, "Installed kernelspec clink in %s\n", dir)
	return nil
}

func uninstall(args []string, stdout io.Writer) error {
	dir, err := specLocation("uninstall", args)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "kernel.json")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("uninstall: no kernelspec in %s", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	fmt.Fprintf(stdout, "Removed kernelspec %s\n", dir)
	return nil
}

// logo draws the kernel's icon: a "c" (an open ring) on a dark square with
// a dot for the stream's head. Drawn at install time, no binary assets.
func logo(size int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	bg := color.NRGBA{0x1f, 0x2a, 0x44, 0xff}
	ring := color.NRGBA{0xf0, 0xf4, 0xff, 0xff}
	dot := color.NRGBA{0xff, 0x8c, 0x1a, 0xff}
	c := float64(size) / 2
	outer, inner := 0.38*float64(size), 0.24*float64(size)
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			dx, dy := float64(x)+0.5-c, float64(y)+0.5-c
			r := math.Hypot(dx, dy)
			angle := math.Atan2(dy, dx)
			px := bg
			if r <= outer && r >= inner && math.Abs(angle) > math.Pi/5 {
				px = ring
			}
			if math.Hypot(dx-0.30*float64(size), dy) <= 0.08*float64(size) {
				px = dot
			}
			img.SetNRGBA(x, y, px)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // encoding an in-memory image cannot fail
	return buf.Bytes()
}
