// Command seckill runs the flash-sale order service and its operations tools.
//
//	seckill [demo]               the in-process demo on 127.0.0.1 (the default with no store configured)
//	seckill serve                serve the HTTP API on SECKILL_REDIS_URL and SECKILL_MYSQL_DSN
//	seckill migrate              apply pending migrations to SECKILL_MIGRATE_DSN, else SECKILL_MYSQL_DSN, and exit
//	seckill reconcile -activity N [-force]  set an activity's Redis stock to total - orders
//	seckill books [-activity N,...]  check the books of activities, print them as JSON
//	seckill userstub [flags]     run a stub of the user-verification service
//	seckill paystub [flags]      run a stub of the payment provider
//	seckill healthcheck          exit 0 when the local /readyz answers 200
//	seckill events tail [--from ID]  print the order events of the configured sink as JSON lines
//	seckill settings             print every SECKILL_* setting serve reads, with its default (Markdown)
//	seckill redis-acl [-format setuser|aclfile]  print the Redis ACL users of the service and of event consumers
//	seckill version              print the version
//	seckill help                 print the commands
//
// Configuration comes from the environment (see README.md). With no command
// and neither SECKILL_REDIS_URL nor SECKILL_MYSQL_DSN set, seckill runs the
// demo: an in-process Redis-compatible store and an embedded SQLite database
// with a demo activity, on 127.0.0.1 only, so `go run ./cmd/seckill` on a
// machine with only Go is a working service. Everything else is the
// production code path. serve never falls back to the demo: with a store
// missing it refuses to start, naming it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/gin-gonic/gin"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	gin.SetMode(gin.ReleaseMode) // no route tables on stdout; requests are logged with slog
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errUsage) {
		fmt.Fprintf(os.Stderr, "seckill: %v\n", err)
	}
	os.Exit(exitStatus(err))
}

// exitStatus is the process's exit status when run returned err: 2 for a
// command line that was not understood, an exitError's own, 1 for any
// other error.
func exitStatus(err error) int {
	var exit exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, &exit):
		return exit.status
	}
	return 1
}

// errUsage reports a command line that names no known subcommand or has bad
// flags; the usage text has already been written.
var errUsage = errors.New("usage")

// exitError is a command's error that exits with its own status rather
// than 1: books says 1 for books that do not balance, 2 for a look that
// could not be made.
type exitError struct {
	status int
	err    error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

const usage = `usage: seckill [command] [flags]

commands:
  demo                   the in-process demo on 127.0.0.1 (default when no store is configured)
  serve                  serve the HTTP API on SECKILL_REDIS_URL and SECKILL_MYSQL_DSN (default otherwise)
  migrate                apply pending migrations to SECKILL_MIGRATE_DSN, else SECKILL_MYSQL_DSN, and exit
  reconcile -activity N [-force]
                         set the activity's Redis stock to total - orders, print the change as JSON;
                         refused when the activity has orders and no stock under SECKILL_KEY_PREFIX
                         (a forgotten prefix) unless -force (Redis lost it)
  books [-activity N,...]
                         check the books of the activities (default all): units held by orders <= total,
                         those units + Redis remaining == total, no user with two orders, activities.sold ==
                         those units; print the figures and violations as JSON; exit 1 on a violation,
                         2 when it could not look
  userstub [flags]       run a stub of the user-verification service (seckill userstub -h)
  paystub [flags]        run a stub of the payment provider (seckill paystub -h)
  healthcheck [flags]    exit 0 when the local /readyz answers 200, for a container's HEALTHCHECK (seckill healthcheck -h)
  events tail [--from ID]
                         print the order events of the configured sink (SECKILL_EVENTS) as JSON lines,
                         from a Redis stream entry id or a Kafka offset (default: the first), until interrupted
  settings               print every SECKILL_* setting serve reads, its default and meaning, as a Markdown table
  redis-acl [-format setuser|aclfile] [-service-user NAME] [-events-user NAME]
                         print the Redis ACL users: the service's (keys under SECKILL_KEY_PREFIX, the events
                         stream, the commands its code and scripts send) and the event consumers' (the stream,
                         read); passwords from SECKILL_REDIS_SERVICE_PASSWORD and SECKILL_REDIS_EVENTS_PASSWORD,
                         printed as their SHA-256 only
  version                print the version
  help                   print this text

Configuration is read from SECKILL_* environment variables: seckill settings lists them.
`

// run is the whole program behind main, with its environment passed in so
// tests can run it: it returns when the command is done or ctx is cancelled
// (SIGINT/SIGTERM) and everything it started has stopped.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd, rest := "serve", args[1:]
	if getenv("SECKILL_REDIS_URL") == "" && getenv("SECKILL_MYSQL_DSN") == "" {
		cmd = "demo"
	}
	if len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr, false)
	case "demo":
		return serve(ctx, rest, getenv, stdout, stderr, true)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout, stderr)
	case "reconcile":
		return reconcile(ctx, rest, getenv, stdout, stderr)
	case "books":
		return checkBooks(ctx, rest, getenv, stdout, stderr)
	case "userstub":
		return userstub(ctx, rest, stderr)
	case "paystub":
		return paystub(ctx, rest, getenv, stderr)
	case "healthcheck":
		return healthcheck(ctx, rest, getenv, stdout, stderr)
	case "events":
		return eventsCommand(ctx, rest, getenv, stdout, stderr)
	case "settings":
		return printSettings(stdout)
	case "redis-acl":
		return redisACLCommand(rest, getenv, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, versionString())
		return nil
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "seckill: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}

// parseFlags parses a subcommand's flags, turning flag errors into errUsage
// (the flag package has printed them).
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return errUsage
	case fs.NArg() > 0:
		fmt.Fprintf(fs.Output(), "%s: unexpected arguments %q\n", fs.Name(), fs.Args())
		return errUsage
	}
	return nil
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return fmt.Sprintf("seckill %s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
