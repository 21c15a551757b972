// Command redistopo runs the Redis topologies of the scale-out and load
// tests as daemons on fixed loopback ports (internal/testkit/redistopo), and
// stops them. scripts/services.sh runs it:
//
//	redistopo start cluster    # 3 primaries + 3 replicas on 7000-7005
//	redistopo start sentinel   # primary 7100, replica 7101, Sentinels 7102-7104
//	redistopo stop             # both, and their data
//
// start prints the topology's SECKILL_REDIS_URL. Starting is idempotent:
// running nodes are left alone, a node that is down (a test killed it) is
// started again and rejoins as a replica. The data, configuration and logs
// live under -dir (default $SECKILL_TOPOLOGY_DIR, or
// $TMPDIR/seckill-redis-topologies).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seckill-oss/seckill/internal/testkit/redistopo"
)

// The fixed ports: the data nodes', then the Sentinels'.
var ports = map[string][]int{
	redistopo.Cluster:  {7000, 7001, 7002, 7003, 7004, 7005},
	redistopo.Sentinel: {7100, 7101, 7102, 7103, 7104},
}

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "redistopo:", err)
		os.Exit(1)
	}
}

func run(args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("redistopo", flag.ContinueOnError)
	def := getenv("SECKILL_TOPOLOGY_DIR")
	if def == "" {
		def = filepath.Join(os.TempDir(), "seckill-redis-topologies")
	}
	dir := fs.String("dir", def, "the topologies' data, configuration and logs")
	bin := fs.String("redis-server", "redis-server", "the redis-server binary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	topology := func(mode string) redistopo.Config {
		return redistopo.Config{Mode: mode, Dir: filepath.Join(*dir, mode), Bin: *bin, Ports: ports[mode], Daemon: true}
	}
	switch fs.Arg(0) {
	case "start":
		mode := fs.Arg(1)
		if _, ok := ports[mode]; !ok {
			return fmt.Errorf("start what: cluster or sentinel, not %q", mode)
		}
		t, err := redistopo.Start(topology(mode))
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, t.URL())
		return nil
	case "stop":
		var errs []error
		for _, mode := range []string{redistopo.Sentinel, redistopo.Cluster} {
			errs = append(errs, redistopo.StopDaemons(topology(mode)))
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return os.RemoveAll(*dir)
	}
	return errors.New("usage: redistopo [-dir DIR] start cluster|sentinel | stop")
}
