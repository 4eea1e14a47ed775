package fsshell

import (
	"fmt"
	"strings"
)

// Options are the generic options, which come before the command as
// Hadoop's -fs and -D do: "strata fs --meta host:7700 -ls /".
type Options struct {
	Meta      string // --meta HOST:PORT: the namespace service
	Namespace string // --namespace NS: the namespace of bare paths
	Timeout   string // --timeout DURATION: the wait for a first connection
	TokenFile string // --token-file PATH: where the client's token is
}

// ParseOptions takes the generic options off the front of args and returns
// the command line that follows them. "--help" stands for -help.
func ParseOptions(args []string) (Options, []string, error) {
	var o Options
	for len(args) > 0 {
		name, value, hasValue := strings.Cut(args[0], "=")
		var dst *string
		switch name {
		case "--meta":
			dst = &o.Meta
		case "--namespace":
			dst = &o.Namespace
		case "--timeout":
			dst = &o.Timeout
		case "--token-file":
			dst = &o.TokenFile
		case "--help":
			return o, append([]string{"-help"}, args[1:]...), nil
		default:
			return o, args, nil
		}
		args = args[1:]
		if !hasValue {
			if len(args) == 0 {
				return o, nil, fmt.Errorf("option %s requires 1 argument", name)
			}
			value, args = args[0], args[1:]
		}
		*dst = value
	}
	return o, args, nil
}
