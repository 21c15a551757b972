package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seckill-oss/seckill/internal/redisacl"
)

// The passwords of the two Redis users `seckill redis-acl` writes. The
// rules carry their SHA-256 (#<hex>), never the passwords: they can go to a
// log, a file or a config map. The service itself takes its password from
// SECKILL_REDIS_URL (redis://seckill:PASSWORD@host:6379/0).
const (
	envRedisServicePassword = "SECKILL_REDIS_SERVICE_PASSWORD" //nolint:gosec // G101: the variable's name, not a credential
	envRedisEventsPassword  = "SECKILL_REDIS_EVENTS_PASSWORD"  //nolint:gosec // G101: the variable's name, not a credential
)

// redisACLCommand runs `seckill redis-acl`: the Redis ACL users of the
// service (its keys, its channels, its commands) and of the order events'
// consumers (the stream, read), for the configured SECKILL_KEY_PREFIX and
// SECKILL_EVENTS_STREAM, as ACL SETUSER commands or aclfile lines.
func redisACLCommand(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("redis-acl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "setuser", "setuser: ACL SETUSER commands, for redis-cli; aclfile: lines of a Redis aclfile")
	service := fs.String("service-user", "seckill", "the service's user, as in SECKILL_REDIS_URL")
	events := fs.String("events-user", "seckill-events", "the order events' consumers' user")
	out := fs.String("out", "", "write the rules to this file (mode 0644: password hashes, no password) instead of stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "setuser" && *format != "aclfile" {
		fmt.Fprintf(stderr, "redis-acl: -format %q: setuser or aclfile\n", *format)
		return errUsage
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	var missing []error
	for _, name := range []string{envRedisServicePassword, envRedisEventsPassword} {
		if getenv(name) == "" {
			missing = append(missing, fmt.Errorf("%s is not set: the password of a user (e.g. openssl rand -hex 32)", name))
		}
	}
	if err := errors.Join(missing...); err != nil {
		return fmt.Errorf("redis-acl: %w", err)
	}
	svc, err := redisacl.Service(*service, getenv(envRedisServicePassword), cfg.KeyPrefix, cfg.Events.Stream)
	if err != nil {
		return fmt.Errorf("redis-acl: -service-user, SECKILL_KEY_PREFIX or SECKILL_EVENTS_STREAM: %w", err)
	}
	consumer, err := redisacl.EventsConsumer(*events, getenv(envRedisEventsPassword), cfg.Events.Stream)
	if err != nil {
		return fmt.Errorf("redis-acl: -events-user or SECKILL_EVENTS_STREAM: %w", err)
	}
	var text strings.Builder
	if *format == "aclfile" {
		// An aclfile replaces every user; one without a default line leaves
		// the default user on, without a password, allowed everything.
		fmt.Fprintln(&text, redisacl.DefaultFileLine)
	}
	for _, u := range []redisacl.User{svc, consumer} {
		if *format == "aclfile" {
			fmt.Fprintln(&text, u.FileLine())
		} else {
			fmt.Fprintln(&text, u.SetUser())
		}
	}
	if *out != "" {
		//nolint:gosec // hashes of the passwords only: Redis, another user, reads the file
		if err := os.WriteFile(*out, []byte(text.String()), 0o644); err != nil {
			return fmt.Errorf("redis-acl: %w", err)
		}
		return nil
	}
	_, err = io.WriteString(stdout, text.String())
	return err
}
