//go:build unix

package mcp

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup starts the process in a process group of its own: stopping it stops what it
// started (npx runs node), and a signal to the gateway's group does not reach it first.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends SIGTERM (SIGKILL when kill is set) to the process's group.
func signalGroup(p *os.Process, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.Pid, sig)
}
