package main

import (
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// environ is the process's environment, a variable so tests can set it.
var environ = os.Environ

// otherVars are SECKILL_* variables that the scripts, docker-compose.yml
// and `seckill redis-acl` read, not the service: no warning for them.
var otherVars = []string{"SECKILL_DB_PASSWORD", "SECKILL_MIGRATE_DB_PASSWORD", "SECKILL_GALERA_SST_PASSWORD",
	envRedisServicePassword, envRedisEventsPassword}

// warnUnknownVars warns of each SECKILL_* variable of env (KEY=value) that
// is not a setting of the table (settingsTable) nor one of otherVars,
// naming the closest setting: a typo such as SECKILL_STRCT
// would otherwise leave its setting at the default without a word. Values
// are never logged.
func warnUnknownVars(env []string, log *slog.Logger) {
	known := settingNames()
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "SECKILL_") || knownSetting(name) || slices.Contains(otherVars, name) {
			continue
		}
		log.Warn("unknown variable "+name+": the service does not read it; did you mean "+closestName(name, known)+"?",
			"variable", name, "closest", closestName(name, known))
	}
}

// closestName is the known name nearest name by edit distance, the first in
// sort order on a tie.
func closestName(name string, known []string) string {
	best, bestDist := "", -1
	for _, k := range known {
		d := levenshtein.ComputeDistance(name, k)
		if bestDist < 0 || d < bestDist || d == bestDist && k < best {
			best, bestDist = k, d
		}
	}
	return best
}
