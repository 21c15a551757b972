package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// README.md's table of settings gives each numeric setting the default the
// table of settings.go reads it with: an operator who leaves a variable
// unset gets what the README says.
//
// Can fail: with SECKILL_LOCK_TTL's default set to 3s in settings.go,
// "SECKILL_LOCK_TTL: README says 2s, the service reads 3s".
func TestSettingsTableIsTheREADMEs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{} // name -> the first `value` of its default column
	first := regexp.MustCompile("`([^`]+)`")
	for line := range strings.Lines(string(readme)) {
		cols := strings.Split(line, "|")
		if len(cols) < 5 || !strings.HasPrefix(strings.TrimSpace(cols[1]), "`SECKILL_") {
			continue
		}
		if m := first.FindStringSubmatch(cols[len(cols)-2]); m != nil {
			documented[strings.Trim(strings.TrimSpace(cols[1]), "`")] = m[1]
		}
	}
	check := func(name string, same func(string) bool, reads any) {
		t.Helper()
		doc, ok := documented[name]
		switch {
		case !ok:
			t.Errorf("%s: not in README.md's table of settings", name)
		case !same(doc):
			t.Errorf("%s: README says %s, the service reads %v", name, doc, reads)
		}
	}
	for _, s := range durationSettings {
		check(s.name, func(doc string) bool { d, err := time.ParseDuration(doc); return err == nil && d == s.def }, s.def)
	}
	for _, s := range countSettings {
		check(s.name, func(doc string) bool { n, err := strconv.Atoi(doc); return err == nil && n == s.def }, s.def)
	}
	for _, s := range rateSettings {
		check(s.name, func(doc string) bool { r, err := strconv.ParseFloat(doc, 64); return err == nil && r == s.def }, s.def)
	}
}
