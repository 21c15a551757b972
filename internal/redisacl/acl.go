package redisacl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/seckill-oss/seckill/internal/keys"
)

// User is one Redis ACL user.
type User struct {
	Name string
	// Password is the rule that sets its password: "#" and the SHA-256 of
	// the password in hex (PasswordRule), so the rules can be printed,
	// logged and kept in a file that does not hold the secret.
	Password string
	Keys     []string // key patterns, without the ~
	Channels []string // pub/sub channel patterns, without the &
	Commands []string // allowed commands, without the +
}

// PasswordRule is the ACL rule that sets password by its SHA-256, which is
// all Redis keeps of it.
func PasswordRule(password string) string {
	sum := sha256.Sum256([]byte(password))
	return "#" + hex.EncodeToString(sum[:])
}

// ErrBadName reports a name Redis's ACL syntax cannot carry: an ACL rule is
// one word, in a command as in an aclfile.
var ErrBadName = errors.New("redisacl: empty or contains white space")

// Service is the service's user: the keys under its key space's Namespace and
// the order events' stream, pub/sub channels under the namespace, and
// ServiceCommands.
func Service(name, password, prefix, stream string) (User, error) {
	if err := words(name, prefix, stream); err != nil {
		return User{}, err
	}
	ns := keys.NewSpace(prefix).Namespace()
	patterns := []string{keys.Glob(ns) + "*"}
	if !strings.HasPrefix(stream, ns) {
		patterns = append(patterns, keys.Glob(stream))
	}
	return User{Name: name, Password: PasswordRule(password), Keys: patterns,
		Channels: []string{keys.Glob(ns) + "*"}, Commands: ServiceCommands()}, nil
}

// EventsConsumer is the user of the order events' consumers: the stream
// alone, with ConsumerCommands, no channel.
func EventsConsumer(name, password, stream string) (User, error) {
	if err := words(name, stream); err != nil {
		return User{}, err
	}
	return User{Name: name, Password: PasswordRule(password), Keys: []string{keys.Glob(stream)}, Commands: ConsumerCommands()}, nil
}

// words refuses what cannot stand as one word of a rule. The prefix may be
// empty (the default); the names may not.
func words(name string, rest ...string) error {
	if name == "" {
		return ErrBadName
	}
	for _, s := range append([]string{name}, rest...) {
		if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return fmt.Errorf("%q: %w", s, ErrBadName)
		}
	}
	return nil
}

// Rules are the user's ACL rules, starting from nothing (reset): on, its
// password, its keys, its channels, its commands.
func (u User) Rules() []string {
	r := []string{"reset", "on", u.Password}
	for _, k := range u.Keys {
		r = append(r, "~"+k)
	}
	r = append(r, "resetchannels")
	for _, c := range u.Channels {
		r = append(r, "&"+c)
	}
	r = append(r, "-@all")
	for _, c := range u.Commands {
		r = append(r, "+"+c)
	}
	return r
}

// SetUser is the user as an ACL SETUSER command line (redis-cli's syntax).
func (u User) SetUser() string { return "ACL SETUSER " + u.Name + " " + strings.Join(u.Rules(), " ") }

// FileLine is the user as a line of an aclfile.
func (u User) FileLine() string { return "user " + u.Name + " " + strings.Join(u.Rules(), " ") }

// DefaultFileLine is the aclfile's line for the default user, the one a
// connection is before it authenticates: PING only, for liveness probes
// (redis-cli ping); HELLO and AUTH to become another user need no rule.
const DefaultFileLine = "user default on nopass resetkeys resetchannels -@all +ping"
