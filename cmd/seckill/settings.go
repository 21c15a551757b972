package main

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agnivade/levenshtein"
)

// setting is one SECKILL_* variable serve reads: the table of them
// (settingsTable) is the one place a setting is named, given its default
// and read. loadConfig reads the environment through it, warnUnknownVars
// knows the names from it, and `seckill settings` prints it.
type setting struct {
	name string
	// def is the value used when the variable is unset, as printed; ""
	// when there is none (the setting is off, or required where it is).
	def     string
	meaning string
	// verbatim settings are taken as set, spaces and all (secrets, URLs,
	// DSNs); the others are trimmed, and blank is unset.
	verbatim bool
	// unset, when not nil, is the value used when unset, from the settings
	// above it in the table (def is then that value under serve's own
	// defaults).
	unset func(c *config) string
	// read parses v (the default when unset) into c, failing on e what
	// this setting alone makes wrong. It may use the settings above it in
	// the table; rules between settings are configRules'.
	read func(c *config, e *envReader, v string)
	// rules are the secure defaults' rules about this setting (strict.go).
	rules []secureRule
}

// secure adds a rule of the secure defaults about the setting: unsafe
// says, naming the setting, what is unsafe in a configuration.
func (s setting) secure(action strictAction, unsafe func(c config) string) setting {
	s.rules = append(slices.Clip(s.rules), secureRule{name: s.name, action: action, unsafe: unsafe})
	return s
}

// readSettings reads every setting of the table into c, in the table's
// order, and records which were set.
func (c *config) readSettings(e *envReader) {
	c.set = map[string]bool{}
	for _, s := range settingsTable {
		v := e.get(s.name)
		if !s.verbatim {
			v = strings.TrimSpace(v)
		}
		switch {
		case v != "":
			c.set[s.name] = true
		case s.unset != nil:
			v = s.unset(c)
		default:
			v = s.def
		}
		s.read(c, e, v)
	}
}

// settingNames are the names of the table's settings.
func settingNames() []string {
	names := make([]string, len(settingsTable))
	for i, s := range settingsTable {
		names[i] = s.name
	}
	return names
}

// settingDefault is the table's default of a setting: what another command
// (healthcheck) assumes when it is unset.
func settingDefault(name string) string {
	for _, s := range settingsTable {
		if s.name == name {
			return s.def
		}
	}
	panic("settingDefault: " + name + " is not in settingsTable")
}

// knownSetting reports whether name is a setting of the table.
func knownSetting(name string) bool { return slices.Contains(settingNames(), name) }

// printSettings writes the table as Markdown: `seckill settings`.
func printSettings(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n| --- | --- | --- |\n")
	for _, s := range settingsTable {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, defaultCell(s.def), s.meaning)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// defaultCell is a default as the table prints it.
func defaultCell(def string) string {
	if def == "" {
		return "unset"
	}
	return "`" + def + "`"
}

// The kinds of setting: each constructor holds the parse and the checks
// every setting of its kind shares.

// text is a string setting taken verbatim, with no default.
func text(name, meaning string, to func(*config) *string) setting {
	return setting{name: name, meaning: meaning, verbatim: true, read: func(c *config, _ *envReader, v string) { *to(c) = v }}
}

// word is a trimmed string setting with a default, checked by check (nil:
// any value).
func word(name, def, meaning string, to func(*config) *string, check func(v string) error) setting {
	return setting{name: name, def: def, meaning: meaning, read: func(c *config, e *envReader, v string) {
		*to(c) = v
		if check == nil {
			return
		}
		if err := check(v); err != nil {
			e.fail(err)
		}
	}}
}

// choice is a setting whose value, lower-cased, is one of values; must
// says in the error what it must be.
func choice(name, def, meaning, must string, to func(*config) *string, values ...string) setting {
	return setting{name: name, def: def, meaning: meaning, read: func(c *config, e *envReader, v string) {
		v = strings.ToLower(v)
		*to(c) = v
		if !slices.Contains(values, v) {
			e.fail(fmt.Errorf("%s=%q: must be %s", name, v, must))
		}
	}}
}

// yesNo is a true/false setting.
func yesNo(name string, def bool, meaning string, to func(*config) *bool) setting {
	return setting{name: name, def: strconv.FormatBool(def), meaning: meaning, read: func(c *config, e *envReader, v string) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			e.fail(fmt.Errorf("%s=%q: must be true or false", name, v))
		}
		*to(c) = b
	}}
}

// duration is a Go duration of at least min.
func duration(name string, def, min time.Duration, meaning string, to func(*config) *time.Duration) setting {
	return setting{name: name, def: durationText(def), meaning: meaning, read: func(c *config, e *envReader, v string) {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			e.fail(fmt.Errorf("%s=%q: not a duration such as 500ms or 2s", name, v))
		case d < min:
			e.fail(fmt.Errorf("%s=%q: must be at least %v", name, v, min))
		}
		*to(c) = d
	}}
}

// durationText is d as a person writes it: 15m, not 15m0s.
func durationText(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// count is a whole number of what (buyers, connections...) in lo..hi.
func count(name string, def, lo, hi int, what, meaning string, to func(*config) *int) setting {
	return setting{name: name, def: strconv.Itoa(def), meaning: meaning, read: func(c *config, e *envReader, v string) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			e.fail(fmt.Errorf("%s=%q: must be a whole number of %s from %d to %d", name, v, what, lo, hi))
			n = 0
		}
		*to(c) = n
	}}
}

// rate is a number a second from min to 1e9; what says in the error what
// it must be.
func rate(name string, def, min float64, what, meaning string, to func(*config) *float64) setting {
	return setting{name: name, def: strconv.FormatFloat(def, 'f', -1, 64), meaning: meaning, read: func(c *config, e *envReader, v string) {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < min || math.IsNaN(r) || r > 1e9 {
			e.fail(fmt.Errorf("%s=%q: must be %s", name, v, what))
		}
		*to(c) = r
	}}
}

// noLimit is what a request rate must be.
const noLimit = "requests per second, 0 for no limit"

// maxRoomPlaces bounds SECKILL_ROOM_MAX_PLACES: a billion places would be
// about 100 GB of Redis.
const maxRoomPlaces = 100_000_000

// maxRoomHeld bounds SECKILL_ROOM_MAX_HELD: each held request keeps a
// connection and a goroutine, so ten million is past any one machine.
const maxRoomHeld = 10_000_000

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
