package redistopo_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
)

func needRedisServer(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (scripts/test.sh installs it)")
	}
}

// A Sentinel topology of children on free ports, announced through other
// ports: the Sentinels name the primary by its announced port, fail over
// when it is killed, and Restart brings it back as a replica of the new one.
func TestSentinelFailsOverAndRestarts(t *testing.T) {
	needRedisServer(t)
	announced := map[int]int{}
	topo, err := redistopo.Start(redistopo.Config{
		Mode: redistopo.Sentinel, Dir: t.TempDir(), MasterName: "test",
		// Announcing the own port through the hook still goes through it.
		Announce: func(port int) (int, error) { announced[port] = port; return port, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(topo.Close)
	if len(announced) != 2 {
		t.Errorf("announced %v, want the two data nodes", announced)
	}
	c := topo.Client()
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("write through the Sentinels (%s): %v", topo.URL(), err)
	}
	old, err := topo.Primary()
	if err != nil {
		t.Fatal(err)
	}
	old.Kill()
	if err := topo.Restart(old); err != nil {
		t.Fatal(err)
	}
	if err := redistopo.WaitFor(30*time.Second, "settled", topo.Settled); err != nil {
		t.Fatal(err)
	}
	if now, err := topo.Primary(); err != nil || now == old {
		t.Errorf("primary after the failover: %v, %v; want the other node", now, err)
	}
}

// Daemons on fixed ports outlive Start; Start again leaves them alone and
// StopDaemons frees their ports. A paused node makes the topology not whole:
// Start builds it afresh.
func TestDaemonClusterIsIdempotent(t *testing.T) {
	needRedisServer(t)
	var ports []int
	for range 6 {
		p, err := redistopo.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
	}
	cfg := redistopo.Config{Mode: redistopo.Cluster, Dir: t.TempDir(), Ports: ports, Daemon: true}
	t.Cleanup(func() {
		if err := redistopo.StopDaemons(cfg); err != nil {
			t.Error(err)
		}
	})
	first, err := redistopo.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pid := func(n *redistopo.Node) string {
		out, _ := exec.Command("redis-cli", "-p", strconv.Itoa(n.Port), "info", "server").Output()
		_, after, _ := strings.Cut(string(out), "process_id:")
		id, _, _ := strings.Cut(after, "\r\n")
		return id
	}
	before := pid(first.Data[0])
	again, err := redistopo.Start(cfg)
	if err != nil || before == "" || pid(again.Data[0]) != before {
		t.Fatalf("a second Start: %v; the running node was not left alone", err)
	}
	out, err := exec.Command("pgrep", "-f", "redis-server 127.0.0.1:"+strconv.Itoa(ports[3])).Output()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(string(out[:len(out)-1]))
	if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if _, err := redistopo.Start(cfg); err != nil {
		t.Fatalf("Start over a paused node: %v", err)
	}
	if !again.Settled() {
		t.Error("not whole after being built afresh")
	}
}
