package seckill_test

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEnvFilesIgnored: a .env file (the compose secrets, a developer's
// local settings) is kept out of git and out of the image's build context.
func TestEnvFilesIgnored(t *testing.T) {
	for _, name := range []string{".gitignore", ".dockerignore"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			lines = append(lines, strings.TrimSpace(l))
		}
		if !slices.Contains(lines, ".env") {
			t.Errorf("%s does not ignore .env", name)
		}
	}
}
