//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd) {}

// signalGroup ends the process: without process groups and SIGTERM, only it, at once.
func signalGroup(p *os.Process, _ bool) { _ = p.Kill() }
