package testenv

import (
	"strings"
	"testing"

	"github.com/testcontainers/testcontainers-go/wait"
)

// The MariaDB container request, checked without Docker: the image, the
// credentials the DSN is built from, and a wait that a MariaDB start
// satisfies (and the MySQL module's did not).
func TestMariaDBRequest(t *testing.T) {
	req, err := mariadbRequest()
	if err != nil {
		t.Fatal(err)
	}
	if req.Image != "mariadb:10.11" {
		t.Errorf("image %q", req.Image)
	}
	for k, want := range map[string]string{"MARIADB_USER": "root", "MARIADB_PASSWORD": "test", "MARIADB_DATABASE": "test"} {
		if got := req.Env[k]; got != want {
			t.Errorf("env %s = %q, want %q", k, got, want)
		}
	}
	all, ok := req.WaitingFor.(*wait.MultiStrategy)
	if !ok {
		t.Fatalf("wait strategy %T, want wait.ForAll", req.WaitingFor)
	}
	var logs []string
	var port bool
	var walk func([]wait.Strategy)
	walk = func(ss []wait.Strategy) {
		for _, s := range ss {
			switch s := s.(type) {
			case *wait.MultiStrategy:
				walk(s.Strategies)
			case *wait.LogStrategy:
				logs = append(logs, s.Log)
			case *wait.HostPortStrategy:
				port = port || s.Port == "3306/tcp"
			}
		}
	}
	walk(all.Strategies)
	if !port {
		t.Error("no wait for port 3306")
	}
	// What mariadb:10.11 prints: the init server (no networking), then the real one.
	const started = "2026-11-24 13:00:00 0 [Note] mariadbd: ready for connections.\n" +
		"Version: '10.11.10-MariaDB-ubu2204'  socket: '/run/mysqld/mysqld.sock'  port: 3306  mariadb.org binary distribution\n"
	const initOnly = "Version: '10.11.10-MariaDB-ubu2204'  socket: '/run/mysqld/mysqld.sock'  port: 0  mariadb.org binary distribution\n"
	if len(logs) != 1 {
		t.Fatalf("log waits %q, want one", logs)
	}
	if !strings.Contains(started, logs[0]) {
		t.Errorf("wait for %q: MariaDB never prints it", logs[0])
	}
	if strings.Contains(initOnly, logs[0]) {
		t.Errorf("wait for %q is met by the init server, before TCP is up", logs[0])
	}
	if strings.Contains(started, "port: 3306  MySQL Community Server") {
		t.Error("the sample log is wrong: MariaDB does not print MySQL's line")
	}
}
