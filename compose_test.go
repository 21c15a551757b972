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

// TestComposeHardened holds docker-compose.yml to issue 33: every image at
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
	}
}
