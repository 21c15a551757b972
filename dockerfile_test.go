package seckill_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// pinnedImage is an image named by tag and by the digest of that build:
// name:tag@sha256:<64 hex>.
var pinnedImage = regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)

// TestDockerfileImagesPinned: every base image of the Dockerfile, and any
// syntax directive's frontend image, is pinned by digest, so a rebuild of
// the same commit cannot pull other files under a tag that moved. The Go
// image's release is go.mod's.
func TestDockerfileImagesPinned(t *testing.T) {
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stages := map[string]bool{}
	froms := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 2 && strings.EqualFold(fields[0], "FROM"):
			froms++
			image := fields[1]
			for _, f := range fields[1:] {
				if !strings.HasPrefix(f, "--") { // --platform=...
					image = f
					break
				}
			}
			if len(fields) >= 4 && strings.EqualFold(fields[len(fields)-2], "AS") {
				stages[strings.ToLower(fields[len(fields)-1])] = true
			}
			if !stages[strings.ToLower(image)] && !pinnedImage.MatchString(image) {
				t.Errorf("FROM %s: not pinned as name:tag@sha256:<digest>", image)
			}
		case strings.HasPrefix(strings.ToLower(sc.Text()), "# syntax="):
			if image := strings.TrimSpace(sc.Text()[len("# syntax="):]); !pinnedImage.MatchString(image) {
				t.Errorf("syntax directive %s: not pinned as name:tag@sha256:<digest>", image)
			}
		}
	}
	if froms < 2 {
		t.Fatalf("read %d FROM lines, want the build and the run stage", froms)
	}
	goMod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	release := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindSubmatch(goMod)
	df, _ := os.ReadFile("Dockerfile")
	if release == nil || !strings.Contains(string(df), "FROM golang:"+string(release[1])+"-") {
		t.Errorf("the build stage's Go image is not go.mod's release %q", release)
	}
}
