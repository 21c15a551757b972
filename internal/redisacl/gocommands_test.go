package redisacl_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

const goRedis = "github.com/redis/go-redis/v9"

// containers are the commands whose ACL names a subcommand too
// (client|setname): their second word belongs to the name.
var containers = []string{"acl", "client", "cluster", "command", "config", "function", "memory", "object", "pubsub", "script", "xgroup", "xinfo"}

// commandOf is the commands a call of the go-redis method m sends: a
// redis.Cmdable method's own (asked of go-redis itself, see recorded); a
// Script's EVALSHA and EVAL; Do's first argument, which must be a
// constant; a transaction's MULTI and EXEC. Other methods (Exec, Close,
// Result...) send none of their own.
func commandOf(m types.Object, call *ast.CallExpr, info *types.Info) ([]string, error) {
	name := m.Name()
	if receiverName(m) == "Script" {
		return map[string][]string{
			"Run": {"evalsha", "eval"}, "RunRO": {"evalsha_ro", "eval_ro"}, "Eval": {"eval"}, "EvalRO": {"eval_ro"},
			"EvalSha": {"evalsha"}, "EvalShaRO": {"evalsha_ro"}, "Load": {"script|load"}, "Exists": {"script|exists"},
		}[name], nil
	}
	switch name {
	case "Do":
		if len(call.Args) < 2 {
			return nil, errors.New("Do without a command")
		}
		v := info.Types[call.Args[1]].Value
		if v == nil || v.Kind() != constant.String {
			return nil, errors.New("Do with a command that is not a constant: name it literally, so the ACL can be checked")
		}
		args := []any{constant.StringVal(v)}
		if len(call.Args) > 2 {
			if v2 := info.Types[call.Args[2]].Value; v2 != nil && v2.Kind() == constant.String {
				args = append(args, constant.StringVal(v2))
			}
		}
		return []string{aclName(args)}, nil
	case "Pipeline", "Pipelined":
		return nil, nil
	case "TxPipeline", "TxPipelined":
		return []string{"multi", "exec"}, nil
	case "Watch":
		return []string{"watch", "multi", "exec"}, nil
	case "Subscribe", "PSubscribe", "SSubscribe":
		return []string{strings.ToLower(name)}, nil
	}
	if _, ok := reflect.TypeFor[redis.Cmdable]().MethodByName(name); ok {
		return recorded(name)
	}
	return nil, nil
}

// receiverName is the name of the type m is a method of.
func receiverName(m types.Object) string {
	sig, ok := m.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return ""
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}

// errRecorded stops a recorded command before it goes anywhere.
var errRecorded = errors.New("recorded")

// recorder is a go-redis hook that keeps a command's arguments instead of
// sending it.
type recorder struct{ args []any }

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		r.args = cmd.Args()
		return errRecorded
	}
}

func (r *recorder) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(context.Context, []redis.Cmder) error { return errRecorded }
}

// recorded is the command go-redis's method sends, as go-redis builds it:
// the method is called with zero arguments (a pointer to a zero struct for
// a pointer) on a client whose hook records the command instead of sending
// it. SetNX, for one, sends SET.
func recorded(method string) (cmds []string, err error) {
	rec := &recorder{}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"})
	defer c.Close()
	c.AddHook(rec)
	fn := reflect.ValueOf(c).MethodByName(method)
	ft := fn.Type()
	in := []reflect.Value{}
	for i := range ft.NumIn() {
		at := ft.In(i)
		switch {
		case ft.IsVariadic() && i == ft.NumIn()-1:
		case at == reflect.TypeFor[context.Context]():
			in = append(in, reflect.ValueOf(context.Background()))
		case at.Kind() == reflect.Pointer:
			in = append(in, reflect.New(at.Elem()))
		default:
			in = append(in, reflect.Zero(at))
		}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-redis's %s panicked with zero arguments (%v): teach commandOf its command", method, p)
		}
	}()
	fn.Call(in)
	if len(rec.args) == 0 {
		return nil, fmt.Errorf("go-redis's %s sent no command: teach commandOf its command", method)
	}
	return []string{aclName(rec.args)}, nil
}

// aclName is the ACL's name of the command of args: command, or
// command|subcommand for a container.
func aclName(args []any) string {
	name := strings.ToLower(fmt.Sprint(args[0]))
	if slices.Contains(containers, name) && len(args) > 1 {
		name += "|" + strings.ToLower(fmt.Sprint(args[1]))
	}
	return name
}
