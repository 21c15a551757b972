package main

import (
	"errors"
	"fmt"
	"net"
)

// checkMode holds serve and demo to their stores: serve never falls back to
// the in-process ones, and the demo, which approves every user, prints an
// admin token and serves an unauthenticated payment stub, listens on
// loopback only (127.0.0.1:8080 unless SECKILL_HTTP_ADDR names another
// loopback address), and so does its admin listener (SECKILL_ADMIN_ADDR),
// which serves the ops API, /metrics and pprof.
func checkMode(cfg *config, demo, addrSet bool) error {
	// Both stores or neither: Redis without the database would write orders
	// to a throwaway file and reuse their ids over Redis's keys after a
	// restart; the database without Redis would sell from a stock that
	// vanishes on exit.
	switch {
	case cfg.RedisURL != "" && cfg.MySQLDSN == "":
		return errors.New("SECKILL_MYSQL_DSN is required when SECKILL_REDIS_URL is set: orders must go to the database that outlives the process")
	case cfg.MySQLDSN != "" && cfg.RedisURL == "":
		return errors.New("SECKILL_REDIS_URL is required when SECKILL_MYSQL_DSN is set: the stock must live in a Redis every instance shares")
	}
	switch {
	case !demo && cfg.embedded():
		return errors.New("serve needs SECKILL_REDIS_URL and SECKILL_MYSQL_DSN, and both are unset; for the in-process demo run `seckill demo`")
	case !demo:
		return nil
	case !cfg.embedded():
		return errors.New("demo runs on in-process stores only: unset SECKILL_REDIS_URL and SECKILL_MYSQL_DSN, or run `seckill serve`")
	}
	if cfg.AdminAddr != "" && !loopbackAddr(cfg.AdminAddr) {
		return fmt.Errorf("SECKILL_ADMIN_ADDR=%q: the demo listens on a loopback address only (such as 127.0.0.1:9091): its admin token is printed and its ops API, /metrics and pprof must not be reachable from the network", cfg.AdminAddr)
	}
	if !addrSet {
		cfg.HTTPAddr = demoAddr
		return nil
	}
	if !loopbackAddr(cfg.HTTPAddr) {
		return fmt.Errorf("SECKILL_HTTP_ADDR=%q: the demo listens on a loopback address only (such as 127.0.0.1:8080): it approves every user and serves an unauthenticated payment stub", cfg.HTTPAddr)
	}
	return nil
}

// loopbackAddr reports whether a listen address (host:port) is on loopback
// only; an empty host is every interface.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && isLoopbackHost(host)
}
