package seckill_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// composeService is what TestComposeHardened reads of a service.
type composeService struct {
	Image       string
	Command     []string
	Entrypoint  []string
	Environment map[string]string
	CapDrop     []string `yaml:"cap_drop"`
	SecurityOpt []string `yaml:"security_opt"`
	ReadOnly    bool     `yaml:"read_only"`
	User        string
}

// exactVersion is an image tag that names one release: 7.4.1, v2.53.0.
var exactVersion = regexp.MustCompile(`:v?[0-9]+\.[0-9]+\.[0-9]+$`)

// secretVar is an interpolated secret.
var secretVar = regexp.MustCompile(`\$\{?[A-Z_]*(PASSWORD|SECRET|TOKEN)`)

// TestComposeHardened holds docker-compose.yml to the production hardening: every image at
// an exact version; every container without capabilities nor privilege
// gain; read-only where it can run so; no secret on a command line; Galera's
// root password not the application's; the admin listener in every profile.
func TestComposeHardened(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]composeService
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Services) < 10 {
		t.Fatalf("read %d services", len(doc.Services))
	}
	// Those whose entrypoint writes outside a volume at start-up.
	writableRoot := func(image string) bool { return strings.HasPrefix(image, "mariadb:") }
	for name, s := range doc.Services {
		if s.Image != "seckill:local" && !exactVersion.MatchString(s.Image) {
			t.Errorf("%s: image %q is not pinned to an exact version", name, s.Image)
		}
		if !slices.Contains(s.CapDrop, "ALL") {
			t.Errorf("%s: cap_drop %v, want [ALL]", name, s.CapDrop)
		}
		if !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: security_opt %v, want no-new-privileges:true", name, s.SecurityOpt)
		}
		if !s.ReadOnly && !writableRoot(s.Image) {
			t.Errorf("%s: root file system not read-only", name)
		}
		if writableRoot(s.Image) && s.User == "" {
			t.Errorf("%s: runs as root", name)
		}
		for _, arg := range append(slices.Clone(s.Command), s.Entrypoint...) {
			if secretVar.MatchString(arg) && !strings.Contains(arg, "$$") || strings.Contains(arg, "sst-auth") {
				t.Errorf("%s: a secret on the command line: %q", name, arg)
			}
		}
		if root := s.Environment["MARIADB_ROOT_PASSWORD"]; root != "" && strings.Contains(root, "SECKILL_DB_PASSWORD") {
			t.Errorf("%s: the database root password is the application's", name)
		}
		if slices.Contains(s.Command, "serve") && s.Environment["SECKILL_ADMIN_ADDR"] == "" {
			t.Errorf("%s: serves without SECKILL_ADMIN_ADDR: /metrics and the admin API on the public port", name)
		}
		// Least privilege: the service's database user reads and writes rows only;
		// the schema is the migrate services' (SECKILL_MIGRATE_DSN).
		if slices.Contains(s.Command, "serve") {
			dsn := s.Environment["SECKILL_MYSQL_DSN"]
			if s.Environment["SECKILL_MIGRATIONS"] != "skip" || s.Environment["SECKILL_MIGRATE_DSN"] != "" || !strings.HasPrefix(dsn, "seckill:") {
				t.Errorf("%s: serve migrates or holds the DDL user: SECKILL_MIGRATIONS=%q, SECKILL_MIGRATE_DSN set %v, DSN user %q",
					name, s.Environment["SECKILL_MIGRATIONS"], s.Environment["SECKILL_MIGRATE_DSN"] != "", strings.SplitN(dsn, ":", 2)[0])
			}
		}
		if slices.Contains(s.Command, "migrate") && (s.Environment["SECKILL_MYSQL_DSN"] != "" || !strings.HasPrefix(s.Environment["SECKILL_MIGRATE_DSN"], "seckill_migrate:")) {
			t.Errorf("%s: migrates not through SECKILL_MIGRATE_DSN as seckill_migrate", name)
		}
		if u := s.Environment["MARIADB_USER"]; u != "" && u != "seckill_migrate" {
			t.Errorf("%s: the image's user %q gets ALL on the database: it must be the migrations' user", name, u)
		}
	}
	// Both database profiles create the service's user alike.
	single, errS := os.ReadFile("deploy/mariadb/initdb/20-runtime-user.sh")
	galera, errG := os.ReadFile("deploy/galera/initdb/20-runtime-user.sh")
	if errS != nil || errG != nil || string(single) != string(galera) {
		t.Errorf("deploy/{mariadb,galera}/initdb/20-runtime-user.sh differ or are missing: %v, %v", errS, errG)
	}
}
