package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// pinning is where a run's processes go (issue 51): each server under test (the proxy,
// Bifrost, the gateway) on one core, the mock and this process (the load) on the others, so
// that what the load and the mock spend does not come out of the server's core. A server
// starts already pinned, so its Go runtime sizes GOMAXPROCS to that core, alike for every
// server. The zero pinning pins nothing; why says why.
type pinning struct {
	srv, rest unix.CPUSet
	taskset   string // the taskset binary when sched_setaffinity failed, "" otherwise
	on        bool
	why       string // when not on
}

// pin plans the run's cores from this process's allowed set and pins this process (every
// thread of it) to the mock's and the load's cores: sched_setaffinity first, taskset from
// util-linux when that fails. When neither works, or fewer than 2 cores are allowed, or want
// is false, nothing is pinned and why says so.
func pin(want bool) pinning {
	if !want {
		return pinning{why: "-pin=false"}
	}
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return pinning{why: "sched_getaffinity: " + err.Error()}
	}
	cpus := cpuIDs(all)
	if len(cpus) < 2 {
		return pinning{why: fmt.Sprintf("this process may use %d CPU, pinning needs 2", len(cpus))}
	}
	p := pinning{on: true}
	p.srv.Set(cpus[0])
	for _, c := range cpus[1:] {
		p.rest.Set(c)
	}
	err := pinTasks(os.Getpid(), &p.rest)
	if err == nil {
		return p
	}
	path, lerr := exec.LookPath("taskset")
	if lerr != nil {
		return pinning{why: fmt.Sprintf("sched_setaffinity: %v, and no taskset (util-linux) on PATH", err)}
	}
	out, terr := exec.Command(path, "-a", "-p", "-c", cpuList(p.rest), strconv.Itoa(os.Getpid())).CombinedOutput()
	if terr != nil {
		return pinning{why: fmt.Sprintf("sched_setaffinity: %v; taskset: %v: %s", err, terr, strings.TrimSpace(string(out)))}
	}
	p.taskset = path
	return p
}

// pinTasks sets the affinity of every thread of pid: twice, for a thread started while the
// first pass ran (a new thread inherits its creator's mask).
func pinTasks(pid int, set *unix.CPUSet) error {
	for range 2 {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH { // ESRCH: the thread ended
				return err
			}
		}
	}
	return nil
}

// start starts cmd pinned: to the server's core if server, else to the others. With
// sched_setaffinity, the calling thread takes the mask while it forks (the child inherits
// it) and gets its own back; with taskset, cmd runs under `taskset -c`, which execs it in
// the same process.
func (p pinning) start(cmd *exec.Cmd, server bool) error {
	if !p.on {
		return cmd.Start()
	}
	set := p.rest
	if server {
		set = p.srv
	}
	if p.taskset != "" {
		cmd.Args = append([]string{p.taskset, "-c", cpuList(set), cmd.Path}, cmd.Args[1:]...)
		cmd.Path = p.taskset
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		return err
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pinning %s: %w", cmd.Path, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &own); rerr != nil && err == nil {
		err = fmt.Errorf("restoring this thread's affinity: %w", rerr)
	}
	return err
}

// note is the report's line on the pinning of c's processes, each one's allowed CPUs read
// back from /proc.
func (p pinning) note(c *cluster) string {
	if !p.on {
		return "Not pinned (" + p.why + "): the servers, the mock and the load share every core."
	}
	how := "sched_setaffinity"
	if p.taskset != "" {
		how = "taskset"
	}
	var each []string
	for _, pr := range append([]*proc{c.mock}, c.targets()...) {
		each = append(each, pr.name+" "+allowedCPUs(pr.pid))
	}
	return fmt.Sprintf("Pinned (%s): each server under test on CPU %s, the mock and the load on CPU %s "+
		"(allowed CPUs read back from /proc: %s, load %s).", how, cpuList(p.srv), cpuList(p.rest),
		strings.Join(each, ", "), allowedCPUs(os.Getpid()))
}

// allowedCPUs is Cpus_allowed_list of pid's /proc status, or "?".
func allowedCPUs(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// cpuIDs are the CPUs of s in order.
func cpuIDs(s unix.CPUSet) []int {
	var ids []int
	for c := 0; c < len(s)*64; c++ {
		if s.IsSet(c) {
			ids = append(ids, c)
		}
	}
	return ids
}

// cpuList is s as taskset's -c list: "1,2,3".
func cpuList(s unix.CPUSet) string {
	var ids []string
	for _, c := range cpuIDs(s) {
		ids = append(ids, strconv.Itoa(c))
	}
	return strings.Join(ids, ",")
}
