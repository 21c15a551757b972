package seckill_test

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// servicesScript runs script after sourcing scripts/services.sh, with the
// SECKILL_* variables of env and no others, and returns its output (stdout
// and stderr) and error.
func servicesScript(t *testing.T, env map[string]string, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "source scripts/services.sh\n"+script)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SECKILL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func randomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// TestServicesDatabaseUserIsLeastPrivileged: services_db_user (scripts/
// services.sh, which the tests and load tests run) creates a user with
// rights on seckill_* databases only, with a generated password in a 0600
// file of the scripts' own, leaves the user alone on the next run, and
// never resets the password of a user it cannot log in as.
// Can fail: the old services_db_user (seckill/seckill, ALL ON *.* WITH
// GRANT OPTION, ALTER USER on a failed login) fails every check below.
func TestServicesDatabaseUserIsLeastPrivileged(t *testing.T) {
	if _, err := exec.LookPath("mariadb"); err != nil {
		t.Skip("the mariadb client is not installed (bash scripts/services.sh ensure installs it)")
	}
	user, state := randomName("sk_t_"), t.TempDir()
	env := map[string]string{"SECKILL_STATE_DIR": state, "SECKILL_SERVICES_DB_USER": user}
	t.Cleanup(func() {
		_, _ = servicesScript(t, env, `_svc_root_sql "DROP USER IF EXISTS '`+user+`'@'127.0.0.1', '`+user+`'@'localhost', '`+user+`_rt'@'127.0.0.1'; DROP DATABASE IF EXISTS `+"`seckill_"+user+"`"+`"`)
	})
	out, err := servicesScript(t, env, "services_db_user && printf 'user=%s\\n' \"$SECKILL_DB_USER\"")
	if err != nil {
		t.Fatalf("services_db_user: %v\n%s", err, out)
	}
	if !strings.Contains(out, "user="+user+"\n") {
		t.Fatalf("services_db_user did not set SECKILL_DB_USER=%s:\n%s", user, out)
	}
	file := filepath.Join(state, "mariadb-"+user+".password")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("no password file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", file, fi.Mode().Perm())
	}
	pw, _ := os.ReadFile(file)
	if len(pw) < 32 {
		t.Errorf("password %q: want 32 generated hex digits", pw)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = user, string(pw), "tcp", "127.0.0.1:3306"
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE `seckill_" + user + "`"); err != nil {
		t.Errorf("the scripts' user may not create its own seckill_ database: %v", err)
	}
	for _, other := range []string{"other_" + user, "seckillX" + user} {
		if _, err := db.Exec("CREATE DATABASE `" + other + "`"); err == nil {
			_, _ = db.Exec("DROP DATABASE `" + other + "`")
			t.Errorf("the scripts' user created database %s, outside seckill_*", other)
		}
	}
	checkNoGlobalRight(t, db)

	// Again: nothing to do, the same password.
	if out, err := servicesScript(t, env, "services_db_user"); err != nil {
		t.Fatalf("services_db_user, second run: %v\n%s", err, out)
	}
	if again, _ := os.ReadFile(file); string(again) != string(pw) {
		t.Errorf("the second run changed the password file")
	}
	// The file lost: the user exists, so it is left alone, with a word.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	out, err = servicesScript(t, env, "services_db_user")
	if err == nil || !strings.Contains(out, "left as it is") {
		t.Errorf("services_db_user with the password file gone: %v, want an error saying the user is left as it is:\n%s", err, out)
	}
	if err := db.Ping(); err != nil {
		t.Errorf("the user's password changed: %v", err)
	}
}

// TestServicesAptInstallIsQuiet: services_apt_install asks apt-get for the
// packages named and not their recommends, and keeps apt's output in a log
// file, printing one line that says where. A stand-in apt-get records its
// arguments and prints as much as apt does.
// Can fail: without --no-install-recommends, or with apt's output on the
// terminal.
func TestServicesAptInstallIsQuiet(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("services_apt_install runs apt-get through sudo here: the stand-in would not be the one run")
	}
	bin, state := t.TempDir(), t.TempDir()
	fake := "#!/bin/sh\necho \"$@\" >>" + filepath.Join(bin, "args") + "\nfor i in $(seq 1 150); do echo \"apt line $i\"; done\n"
	if err := os.WriteFile(filepath.Join(bin, "apt-get"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := servicesScript(t, map[string]string{"SECKILL_STATE_DIR": state},
		"PATH="+bin+":$PATH services_apt_install gnuplot-nox")
	if err != nil {
		t.Fatalf("services_apt_install: %v\n%s", err, out)
	}
	args, _ := os.ReadFile(filepath.Join(bin, "args"))
	if !strings.Contains(string(args), "install -y -qq --no-install-recommends gnuplot-nox") {
		t.Errorf("apt-get was run as:\n%s\nwant install ... --no-install-recommends gnuplot-nox", args)
	}
	log := filepath.Join(state, "apt.log")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(out, log) {
		t.Errorf("services_apt_install printed %d lines, want one naming %s:\n%s", len(lines), log, out)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "apt line 150") {
		t.Errorf("%s does not hold apt-get's output", log)
	}
}

// checkNoGlobalRight fails t when the connection's user holds a right on
// every database (*.*) beyond USAGE.
func checkNoGlobalRight(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query("SHOW GRANTS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(g, " ON *.* ") && !strings.HasPrefix(g, "GRANT USAGE ON *.* ") {
			t.Errorf("a global right: %s", g)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
