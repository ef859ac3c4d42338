package mockllm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// readFixture reads file from FixturesDir (never outside it) and cuts it into events, each
// with its terminating blank line; the events concatenated are the file's bytes unchanged.
func (s *Server) readFixture(file string) ([][]byte, error) {
	if s.opts.FixturesDir == "" {
		return nil, errors.New("replay: the server has no fixtures directory")
	}
	root, err := os.OpenRoot(s.opts.FixturesDir)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer root.Close()
	f, err := root.Open(file)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return splitEvents(b.Bytes()), nil
}

// splitEvents cuts an SSE body after each blank line ("\n\n" or "\r\n\r\n"); a tail without
// one is the last event.
func splitEvents(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		end := len(data)
		if i := bytes.Index(data, []byte("\n\n")); i >= 0 {
			end = i + 2
		}
		if i := bytes.Index(data, []byte("\r\n\r\n")); i >= 0 && i+4 < end {
			end = i + 4
		}
		out = append(out, data[:end])
		data = data[end:]
	}
	return out
}
