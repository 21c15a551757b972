package chaos

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
)

// instance is one `seckill serve` process of the campaign, on a fixed
// loopback port so a restart keeps its address.
type instance struct {
	index int
	bin   string
	env   []string
	url   string
	log   *os.File

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
}

func (in *instance) start() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	cmd := exec.Command(in.bin, "serve")
	cmd.Env = in.env
	cmd.Stdout, cmd.Stderr = in.log, in.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start instance %d: %w", in.index, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	in.cmd, in.done, in.paused = cmd, done, false
	return nil
}

// restart starts the process again until it is ready, as a supervisor
// would: the service refuses to start while Redis or the database does not
// answer, which a fault on its link can make so for a while.
func (in *instance) restart(within time.Duration) error {
	deadline := time.Now().Add(within)
	for starts := 1; ; starts++ {
		if err := in.start(); err != nil {
			return err
		}
		err := in.waitReady(max(time.Until(deadline), 0))
		if err == nil {
			return nil
		}
		if in.running() || time.Now().After(deadline) {
			return fmt.Errorf("%w (%d starts in %v; its log ends: %q)", err, starts, within, in.logTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// logTail is the end of the instance's log: why it would not start.
func (in *instance) logTail() string {
	b, err := os.ReadFile(in.log.Name())
	if err != nil {
		return err.Error()
	}
	return string(b[max(len(b)-600, 0):])
}

// waitReady waits until the instance answers /readyz 200, or within passes.
func (in *instance) waitReady(within time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	err := redistopo.WaitFor(within, fmt.Sprintf("instance %d (%s)", in.index, in.url), func() bool {
		if !in.running() {
			return true
		}
		res, err := client.Get(in.url + "/readyz")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if err == nil && !in.running() {
		return fmt.Errorf("instance %d exited before it was ready (log %s)", in.index, in.log.Name())
	}
	return err
}

func (in *instance) running() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return false
	}
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the process and waits for it.
func (in *instance) kill() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

func (in *instance) pause(on bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return
	}
	sig := syscall.SIGCONT
	if on {
		sig = syscall.SIGSTOP
	}
	_ = in.cmd.Process.Signal(sig)
	in.paused = on
}

// stop ends the process: SIGCONT (it may be paused), SIGTERM, SIGKILL after
// 10 s.
func (in *instance) stop() {
	in.mu.Lock()
	cmd, done := in.cmd, in.done
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
