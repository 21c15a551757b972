// Package luascript loads the service's Redis scripts. Each script lives in
// its own .lua file next to the package that runs it, embedded with the
// package (//go:embed *.lua), so the Lua reads as Lua and is reviewed as such.
package luascript

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Load returns the script in the files names of files, joined in that
// order: a file of shared functions first, then the script that calls them
// (Redis runs one script body; Lua has no include). A name that files does
// not hold is a mistake in the program, not in its input or its
// surroundings: Load panics, at package initialisation, before any request.
func Load(files fs.FS, names ...string) *redis.Script {
	var src strings.Builder
	for _, name := range names {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			panic(fmt.Sprintf("luascript: %v", err))
		}
		src.Write(b)
		src.WriteByte('\n')
	}
	return redis.NewScript(src.String())
}
