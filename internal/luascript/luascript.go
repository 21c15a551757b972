// Package luascript loads the service's Redis scripts. Each script lives in
// its own .lua file next to the package that runs it, embedded with the
// package (//go:embed *.lua), so the Lua reads as Lua and is reviewed as such.
package luascript

import (
	"fmt"
	"io/fs"

	"github.com/redis/go-redis/v9"
)

// Load returns the script in the file name of files. A name that files does
// not hold is a mistake in the program, not in its input or its
// surroundings: Load panics, at package initialisation, before any request.
func Load(files fs.FS, name string) *redis.Script {
	src, err := fs.ReadFile(files, name)
	if err != nil {
		panic(fmt.Sprintf("luascript: %v", err))
	}
	return redis.NewScript(string(src))
}
