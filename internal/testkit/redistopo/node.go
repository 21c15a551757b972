package redistopo

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

const sigCont = syscall.SIGCONT

// Node is one redis-server of a topology.
type Node struct {
	Port int
	// Announce is the port the node announces to its replicas' Sentinels
	// (a proxy in front of it), Port when none.
	Announce int
	dir      string
	bin      string
	daemon   bool
	args     []string // the arguments it was last started with
	cmd      *exec.Cmd
	done     chan struct{}
}

// Addr is the node's own address.
func (n *Node) Addr() string { return fmt.Sprintf("127.0.0.1:%d", n.Port) }

// start starts the node with args after the common ones (conf: a
// configuration file first, "" for none), unless it answers already, and
// waits until it answers.
func (n *Node) start(conf string, args ...string) error {
	if n.Running() {
		return nil
	}
	if portTaken(n.Port) {
		return fmt.Errorf("port %d is taken by something that does not answer as a Redis: pick other ports", n.Port)
	}
	var all []string
	if conf != "" {
		all = append(all, conf)
	}
	all = append(all, "--port", strconv.Itoa(n.Port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", n.dir)
	all = append(all, args...)
	n.args = all
	if err := n.run(); err != nil {
		return err
	}
	return WaitFor(10*time.Second, fmt.Sprintf("redis-server on %d", n.Port), n.answers)
}

// run starts the process of n.args: a daemon, or a child whose exit closes
// n.done.
func (n *Node) run() error {
	logPath := filepath.Join(n.dir, fmt.Sprintf("redis-%d.log", n.Port))
	if n.daemon {
		args := append(append([]string{}, n.args...), "--daemonize", "yes",
			"--pidfile", n.pidfile(), "--logfile", logPath)
		if out, err := exec.Command(n.bin, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("start redis-server on %d: %w\n%s", n.Port, err, out)
		}
		return nil
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("redis log: %w", err)
	}
	n.cmd = exec.Command(n.bin, n.args...)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	if err := n.cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start redis-server on %d: %w", n.Port, err)
	}
	n.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}(n.cmd, n.done)
	return nil
}

func (n *Node) pidfile() string { return filepath.Join(n.dir, fmt.Sprintf("redis-%d.pid", n.Port)) }

// Running reports whether the node runs: a child that has not exited, or a
// daemon that answers PING within a second (a paused one does not).
func (n *Node) Running() bool {
	if n.cmd != nil {
		select {
		case <-n.done:
			return false
		default:
			return true
		}
	}
	return n.answers()
}

// answers reports whether the node answers PING within a second: a child
// that has just started may not listen yet.
func (n *Node) answers() bool {
	if !portTaken(n.Port) {
		return false
	}
	c := redis.NewClient(&redis.Options{Addr: n.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return c.Ping(ctx).Err() == nil
}

// Kill SIGKILLs a node this process started as its child, and waits for it
// to exit.
func (n *Node) Kill() {
	if n.cmd != nil && n.Running() {
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

// Signal sends sig to a node this process started as its child.
func (n *Node) Signal(sig syscall.Signal) {
	if n.cmd != nil && n.Running() {
		_ = n.cmd.Process.Signal(sig)
	}
}

// Restart starts a node that is down again with its last arguments, but
// replicaOf when not 0 (the primary it then follows).
func (n *Node) Restart(replicaOf int) error {
	if n.Running() {
		return nil
	}
	saved := n.args
	if replicaOf != 0 {
		n.args = append(withoutReplicaOf(n.args), "--replicaof", "127.0.0.1", strconv.Itoa(replicaOf))
	}
	err := n.run()
	n.args = saved
	if err != nil {
		return err
	}
	return WaitFor(10*time.Second, fmt.Sprintf("redis-server on %d", n.Port), n.answers)
}

// stop stops the node, whoever started it and whether or not it is paused,
// and waits until its port is free. A daemon is found by its pid file, and
// only while something holds its port: a killed node's file is stale.
func (n *Node) stop() error {
	switch {
	case n.cmd != nil:
		n.Signal(sigCont)
		n.Kill()
	case portTaken(n.Port):
		pid, err := readPID(n.pidfile())
		if err != nil {
			return fmt.Errorf("port %d is held, and not by a node of %s: %w", n.Port, n.dir, err)
		}
		_ = syscall.Kill(pid, syscall.SIGCONT)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return WaitFor(10*time.Second, fmt.Sprintf("port %d to be free", n.Port), func() bool { return !portTaken(n.Port) })
}

func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	return pid, nil
}

func withoutReplicaOf(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--replicaof" {
			i += 2
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// FreePort is a loopback port free at the time of asking.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// portTaken reports whether something accepts connections on the port.
func portTaken(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
