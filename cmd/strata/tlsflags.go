package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/tlsconf"
)

// TLS is on by default on every connection (docs/security.md): servers
// need a certificate (`strata server --dev` makes its own), clients check
// the servers' against a CA. --plaintext, on both sides, turns it off.

// devTLSDir is where `strata server --dev` keeps its TLS files, under its
// data directory; a client given no CA looks for ./strata-data's (the dev
// server's default data directory, where `make run` puts it).
const devTLSDir = "tls"

// defaultDevCA is the CA a client uses when none is given, if it exists.
var defaultDevCA = filepath.Join("strata-data", devTLSDir, tlsconf.CAFile)

// tlsFlags are the TLS settings of a command: --tls-cert, --tls-key,
// --tls-ca and --plaintext, each defaulting to its environment variable
// (STRATA_TLS_CERT, STRATA_TLS_KEY, STRATA_TLS_CA, STRATA_PLAINTEXT=1).
type tlsFlags struct {
	cert, key, ca string
	plaintext     bool
}

func (f *tlsFlags) register(cmd *cobra.Command, server bool) {
	fl := cmd.Flags()
	if server {
		fl.StringVar(&f.cert, "tls-cert", "", "PEM certificate to serve with, and to present to the other members and the service (mutual TLS) (default $STRATA_TLS_CERT)")
		fl.StringVar(&f.key, "tls-key", "", "PEM key of --tls-cert (default $STRATA_TLS_KEY)")
		fl.StringVar(&f.ca, "tls-ca", "", "PEM CA bundle of the cluster: checks the servers this process connects to, and the certificates members and workers present (default $STRATA_TLS_CA)")
		fl.BoolVar(&f.plaintext, "plaintext", false, "serve and connect without TLS (default $STRATA_PLAINTEXT=1; TLS is on otherwise)")
		return
	}
	fl.StringVar(&f.ca, "tls-ca", "", "PEM CA bundle to check the servers with (default $STRATA_TLS_CA, else ./"+defaultDevCA+" if it exists, else the system's roots)")
	fl.StringVar(&f.cert, "tls-cert", "", "PEM client certificate to present, if any (default $STRATA_TLS_CERT)")
	fl.StringVar(&f.key, "tls-key", "", "PEM key of --tls-cert (default $STRATA_TLS_KEY)")
	fl.BoolVar(&f.plaintext, "plaintext", false, "connect without TLS (default $STRATA_PLAINTEXT=1)")
}

// files returns the files the flags, else the environment, name, and
// whether TLS is off.
func (f *tlsFlags) files() (tlsconf.Files, bool) {
	or := func(v, env string) string {
		if v != "" {
			return v
		}
		return os.Getenv(env)
	}
	plain := f.plaintext || os.Getenv("STRATA_PLAINTEXT") == "1" || os.Getenv("STRATA_PLAINTEXT") == "true"
	return tlsconf.Files{Cert: or(f.cert, "STRATA_TLS_CERT"), Key: or(f.key, "STRATA_TLS_KEY"), CA: or(f.ca, "STRATA_TLS_CA")}, plain
}

// client returns a client's settings: nil for plaintext.
func (f *tlsFlags) client() (*tls.Config, error) {
	files, plain := f.files()
	if plain {
		return nil, nil
	}
	if files.CA == "" {
		if _, err := os.Stat(defaultDevCA); err == nil {
			files.CA = defaultDevCA
		}
	}
	return files.Client()
}

// servers returns a server's settings, as a server and as a client of the
// other servers (with its certificate: mutual TLS); nil, nil for plaintext.
// devDir, if set, is where the dev server makes its own files when given
// none.
func (f *tlsFlags) servers(devDir string) (server, client *tls.Config, err error) {
	files, plain := f.files()
	if plain {
		return nil, nil, nil
	}
	if files.Cert == "" && files.Key == "" && devDir != "" {
		if files, err = tlsconf.Dev(devDir); err != nil {
			return nil, nil, err
		}
	}
	if files.Cert == "" || files.Key == "" {
		return nil, nil, errors.New("TLS is on by default: give --tls-cert and --tls-key (with --tls-ca, the cluster's CA, for mutual TLS between members and workers), or --plaintext to serve without it")
	}
	if server, err = files.Server(); err != nil {
		return nil, nil, err
	}
	client, err = files.Client()
	return server, client, err
}

func certCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "cert", Short: "Make TLS certificates for trying Strata on one host",
		Long: `TLS is on by default (docs/security.md): every server needs a certificate
and every client the CA that signed it.`}
	cmd.AddCommand(&cobra.Command{
		Use:   "create DIR",
		Short: "Make a CA and a certificate for this host's names and addresses in DIR",
		Long: `Create makes, in DIR (0700), what 'strata server --dev' makes for itself: a
self-signed CA (ca.pem; its key is thrown away, so it signs nothing else) and
one certificate it signed (cert.pem, key.pem 0600) for localhost, this host's
name and every address of this host, for servers and clients alike. Give
them to 'strata meta' and 'strata worker' as --tls-cert, --tls-key and
--tls-ca, and the CA to clients (--tls-ca, $STRATA_TLS_CA, the Hadoop
client's fs.strata.tls.ca). If DIR holds them already, it keeps them.

For a cluster of several hosts, or anything that matters, use certificates of
your own CA: each member's and worker's naming the addresses it is reached at.`,
		Example: `  strata admin cert create /etc/strata/tls
  strata meta --tls-cert /etc/strata/tls/cert.pem --tls-key /etc/strata/tls/key.pem --tls-ca /etc/strata/tls/ca.pem`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := tlsconf.Dev(args[0])
			if err != nil {
				return err
			}
			fmt.Printf("CA %s\ncertificate %s\nkey %s\n", f.CA, f.Cert, f.Key)
			return nil
		},
	})
	return cmd
}
