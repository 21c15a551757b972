package lock

import (
	"fmt"
	"strings"
)

// FenceKey returns the key of the fence counter that grants of key draw
// from (SeedFence raises it), in key's hash slot. Only tools and tests that
// inspect or damage the counter need it.
func FenceKey(key string) (string, error) { return fenceKeyOf(key) }

// fenceKeyOf returns the key of the fence counter of key, in key's hash slot.
func fenceKeyOf(key string) (string, error) { return siblingKeyOf(key, "fence") }

// waitersKeyOf returns the key of key's waiters' marker, in key's hash slot:
// set while another owner waits to obtain it (obtain.lua, refence.lua).
func waitersKeyOf(key string) (string, error) { return siblingKeyOf(key, "waiters") }

// releasedKeyOf returns the key of owner's release marker of key, in key's
// hash slot: key+":released:<token>".
func releasedKeyOf(key, owner string) (string, error) {
	return siblingKeyOf(key, "released:"+strings.TrimSuffix(owner, ":"))
}

// siblingKeyOf returns key+":"+name if key has a hash tag, otherwise
// "{"+key+"}:"+name, whose tag is the whole key: either way, key's slot.
func siblingKeyOf(key, name string) (string, error) {
	if open := strings.IndexByte(key, '{'); open >= 0 && strings.IndexByte(key[open+1:], '}') > 0 {
		return key + ":" + name, nil
	}
	if strings.IndexByte(key, '}') >= 0 {
		return "", fmt.Errorf("lock: key %q has no {hash tag} but contains '}': give it a hash tag", key)
	}
	return "{" + key + "}:" + name, nil
}
