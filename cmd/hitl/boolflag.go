package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
)

// envBool is a true/false flag that falls back to an environment
// variable: --name alone is true and --name=false false (any spelling
// strconv.ParseBool reads: true, false, 1, 0, …); when the command line
// does not give it, the variable does, in the same spellings; with
// neither it is unset, which given reports and on reads as false. A
// variable that is not true or false is refused by parse, unless the
// command line gives the flag.
type envBool struct {
	env   string
	value bool
	set   bool
	err   error // the variable is not true or false
}

// envBoolVar adds the boolean flag name, which falls back to the
// environment variable env, to fs. The usage is followed by the
// variable's name.
func envBoolVar(fs *flag.FlagSet, name, env, usage string) *envBool {
	b := &envBool{env: env}
	if s := os.Getenv(env); s != "" {
		v, err := strconv.ParseBool(s)
		if err != nil {
			b.err = fmt.Errorf("%s must be true or false (or 1 or 0); got %q", env, s)
		}
		b.value, b.set = v, err == nil
	}
	fs.Var(b, name, usage+" ("+env+")")
	return b
}

// Set sets the flag from the command line.
func (b *envBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	b.value, b.set, b.err = v, true, nil
	return nil
}

// String is the flag's value, for -h's default.
func (b *envBool) String() string {
	if b == nil {
		return "false"
	}
	return strconv.FormatBool(b.value)
}

// IsBoolFlag lets the flag be given alone, as --name.
func (b *envBool) IsBoolFlag() bool { return true }

// Get returns the value, as flag.Getter does.
func (b *envBool) Get() any { return b.value }

// on reports whether the flag is true; unset is false.
func (b *envBool) on() bool { return b.value }

// given returns the value, and whether the command line or the
// environment gave one.
func (b *envBool) given() (value, ok bool) { return b.value, b.set }

// checkEnvBools returns the first error of an envBool flag of fs whose
// variable is not true or false (and that the command line did not give).
func checkEnvBools(fs *flag.FlagSet) error {
	var first error
	fs.VisitAll(func(f *flag.Flag) {
		if b, ok := f.Value.(*envBool); ok && b.err != nil && first == nil {
			first = fmt.Errorf("--%s: %w", f.Name, b.err)
		}
	})
	return first
}
