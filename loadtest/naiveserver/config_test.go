package main

import (
	"strings"
	"testing"
	"time"
)

// The naive server runs only on real stores with a verification service,
// as run.sh starts it, and says which variable is missing or wrong.
// Can fail: a store or the verifier falling back to a default, an error
// naming the wrong variable, or a variable read under another name.
func TestLoadConfig(t *testing.T) {
	full := map[string]string{
		"SECKILL_REDIS_URL": "redis://127.0.0.1:6379/0", "SECKILL_MYSQL_DSN": "u:p@tcp(127.0.0.1:3306)/db",
		"SECKILL_USERCHECK_URL": "http://127.0.0.1:1", "SECKILL_LOCK_TTL": "1s", "SECKILL_USERCHECK_TIMEOUT": "300ms",
		"SECKILL_KEY_PREFIX": "lt:", "SECKILL_LOG_LEVEL": "warn",
	}
	without := func(name, value string) func(string) string {
		return func(k string) string {
			if k == name {
				return value
			}
			return full[k]
		}
	}
	cfg, err := loadConfig(without("", ""))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.httpAddr != "127.0.0.1:8080" || cfg.keyPrefix != "lt:" || cfg.userCheckTimeout != 300*time.Millisecond || cfg.lockTTL != time.Second {
		t.Errorf("config %+v", cfg)
	}
	for name, value := range map[string]string{
		"SECKILL_REDIS_URL": "", "SECKILL_MYSQL_DSN": "", "SECKILL_USERCHECK_URL": "",
		"SECKILL_LOCK_TTL": "", "SECKILL_USERCHECK_TIMEOUT": "-1s", "SECKILL_LOG_LEVEL": "loud",
	} {
		if _, err := loadConfig(without(name, value)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming it", name, value, err)
		}
	}
}
