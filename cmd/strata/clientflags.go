package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/token"
)

// defaultMeta is where clients look for the namespace service.
const defaultMeta = "127.0.0.1:7700"

// metaAddr returns flag, else $STRATA_META, else the default.
func metaAddr(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("STRATA_META"); env != "" {
		return env
	}
	return defaultMeta
}

// timeoutHelp says what --timeout is, for every command that has it.
const timeoutHelp = "how long to wait for the namespace service to accept a first connection, as 10s or 1m " +
	"(default $STRATA_TIMEOUT, else 3s); a failover once it did is waited for up to 30s"

// tokenHelpText says where a client finds its token, for --help.
const tokenHelpText = "The client proves who it is with a token (docs/security.md): $STRATA_TOKEN, else the file " +
	"--token-file names, else $STRATA_TOKEN_FILE, else ~/.strata/token (which strata server --dev writes)"

// clientFlags are the flags of every command that talks to the service.
type clientFlags struct {
	meta      string
	ns        string
	timeout   string
	tokenFile string
	tls       tlsFlags
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.meta, "meta", "", "namespace service address HOST:PORT, or its members' HOST:PORT,... (default $STRATA_META or "+defaultMeta+")")
	cmd.Flags().StringVar(&f.ns, "namespace", "", "namespace of bare paths (default \"default\")")
	cmd.Flags().StringVar(&f.timeout, "timeout", "", timeoutHelp)
	f.tls.register(cmd, false)
	registerTokenFile(cmd, &f.tokenFile)
}

// registerTokenFile adds --token-file to cmd.
func registerTokenFile(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "token-file", "", "file holding the token that proves who you are (default "+
		"$STRATA_TOKEN's token, else $STRATA_TOKEN_FILE, else ~/.strata/token)")
}

func (f *clientFlags) client() (*client.Client, error) {
	cfg, err := clientConfig(f.meta, f.ns, f.timeout, f.tokenFile)
	if err != nil {
		return nil, err
	}
	if cfg.TLS, err = f.tls.client(); err != nil {
		return nil, err
	}
	return client.New(cfg)
}

// clientConfig is the configuration of a client of the service at meta
// (a flag, else $STRATA_META, else the default), waiting timeout (a flag,
// else $STRATA_TIMEOUT, else the client's default) for a first connection,
// with the token token.Find finds (tokenFile is --token-file), its unary
// calls over callwire unless $STRATA_META_TRANSPORT is grpc, looking for
// the workers' sockets in $STRATA_SC_DIR if set. A malformed
// address or duration is a usage error, found before anything is dialled.
func clientConfig(meta, ns, timeout, tokenFile string) (client.Config, error) {
	cfg := client.Config{Meta: metaAddr(meta), Namespace: ns}
	tok, err := token.Find(tokenFile)
	if err != nil {
		return cfg, usagef("%v", err)
	}
	if tok != "" {
		if _, err := token.Parse(tok); err != nil {
			return cfg, usagef("the token (from %s): %v", tokenSource(tokenFile), err)
		}
	}
	cfg.Token = tok
	if _, err := client.ParseMembers(cfg.Meta); err != nil {
		return cfg, usagef("%s%v", fromEnv(meta, "STRATA_META"), err)
	}
	if cfg.ConnectTimeout, err = connectTimeout(timeout); err != nil {
		return cfg, usagef("%s%v", fromEnv(timeout, "STRATA_TIMEOUT"), err)
	}
	switch t := os.Getenv("STRATA_META_TRANSPORT"); t {
	case "", "callwire":
	case "grpc":
		cfg.GRPCOnly = true
	default:
		return cfg, usagef("$STRATA_META_TRANSPORT: %q is neither callwire (the default) nor grpc", t)
	}
	// Where the workers' short-circuit sockets are shared into this
	// client's container (docs/deploy.md); unset: at their own paths.
	cfg.ShortCircuitDir = os.Getenv("STRATA_SC_DIR")
	// The environment's TLS settings (commands with flags override them).
	var env tlsFlags
	if cfg.TLS, err = env.client(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// tokenSource says where token.Find took the token from.
func tokenSource(file string) string {
	switch {
	case os.Getenv(token.EnvVar) != "":
		return "$" + token.EnvVar
	case file != "":
		return file
	case os.Getenv(token.EnvFile) != "":
		return os.Getenv(token.EnvFile)
	}
	return token.DefaultFile()
}

// fromEnv says where a setting came from when no flag gave it.
func fromEnv(flag, env string) string {
	if flag == "" && os.Getenv(env) != "" {
		return "$" + env + ": "
	}
	return ""
}

// connectTimeout parses flag, else $STRATA_TIMEOUT: a duration ("10s",
// "1m") or a number of seconds; 0 when neither is set (the default).
func connectTimeout(flag string) (time.Duration, error) {
	s := flag
	if s == "" {
		s = os.Getenv("STRATA_TIMEOUT")
	}
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, serr := strconv.ParseFloat(s, 64)
		if serr != nil {
			return 0, fmt.Errorf("timeout %q is not a duration such as 10s or 1m", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("timeout %q is not positive", s)
	}
	return d, nil
}
