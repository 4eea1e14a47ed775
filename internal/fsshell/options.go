package fsshell

import (
	"math"
	"strings"
)

// cmdFormat parses a command's options as Hadoop's CommandFormat does:
// options come first, each its own word ("-R -h", never "-Rh"), a bare "-"
// is an argument and "--" ends them; then the count of the remaining
// arguments is checked against min and max.
type cmdFormat struct {
	min, max      int
	flags         map[string]bool // the allowed options, and whether each is set
	ignoreUnknown bool            // unknown options stay arguments (chmod -w)
}

// unbounded is CommandFormat's Integer.MAX_VALUE.
const unbounded = math.MaxInt

func newFormat(min, max int, opts ...string) *cmdFormat {
	f := &cmdFormat{min: min, max: max, flags: map[string]bool{}}
	for _, o := range opts {
		f.flags[o] = false
	}
	return f
}

// parse returns the arguments left after the options.
func (f *cmdFormat) parse(args []string) ([]string, error) {
	args = append([]string(nil), args...)
	pos := 0
	for pos < len(args) {
		arg := args[pos]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			break
		}
		if arg == "--" {
			args = remove(args, pos)
			break
		}
		opt := arg[1:]
		if _, ok := f.flags[opt]; ok {
			args = remove(args, pos)
			f.flags[opt] = true
			continue
		}
		if !f.ignoreUnknown {
			return nil, usagef("Illegal option %s", arg)
		}
		pos++
	}
	if len(args) < f.min {
		return nil, usagef("Not enough arguments: expected %d but got %d", f.min, len(args))
	}
	if len(args) > f.max {
		return nil, usagef("Too many arguments: expected %d but got %d", f.max, len(args))
	}
	return args, nil
}

// opt reports whether option name was given.
func (f *cmdFormat) opt(name string) bool { return f.flags[name] }

// set returns the options that were given.
func (f *cmdFormat) set() []string {
	var out []string
	for name, on := range f.flags {
		if on {
			out = append(out, name)
		}
	}
	return out
}

func remove(args []string, i int) []string {
	return append(args[:i], args[i+1:]...)
}

// popOptionWithArgument removes "name value" from args, wherever it is
// before a "--", and returns the value (Hadoop's StringUtils of that name).
func popOptionWithArgument(name string, args []string) (string, []string, bool, error) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a != name {
			continue
		}
		if i+1 >= len(args) {
			return "", nil, false, usagef("option %s requires 1 argument.", name)
		}
		v := args[i+1]
		rest := append(append([]string(nil), args[:i]...), args[i+2:]...)
		return v, rest, true, nil
	}
	return "", args, false, nil
}
