package token

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc/credentials"
)

// EnvVar names the environment variable that holds a client's token.
const EnvVar = "STRATA_TOKEN"

// EnvFile names the environment variable that names a client's token file.
const EnvFile = "STRATA_TOKEN_FILE"

// DefaultFile returns the token file a client reads when nothing else says
// where its token is: ~/.strata/token ("" when the home is unknown).
func DefaultFile() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".strata", "token")
}

// Find returns a client's token: $STRATA_TOKEN, else the content of file
// (a flag), else of $STRATA_TOKEN_FILE, else of DefaultFile. No token at
// all is "" and no error: the service then answers UNAUTHENTICATED, which
// says what to do. A file named explicitly that cannot be read is an error.
func Find(file string) (string, error) {
	if t := strings.TrimSpace(os.Getenv(EnvVar)); t != "" {
		return t, nil
	}
	explicit := true
	if file == "" {
		file = os.Getenv(EnvFile)
	}
	if file == "" {
		file, explicit = DefaultFile(), false
	}
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// WriteFile writes tok to file, readable by its owner only, creating the
// directory (0700) if needed; an existing file is replaced atomically.
func WriteFile(file, tok string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".token-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(tok + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// MetadataKey is the gRPC metadata key that carries the token, as
// "Bearer TOKEN".
const MetadataKey = "authorization"

// Bearer is the scheme of MetadataKey's value.
const Bearer = "Bearer "

// Credentials returns gRPC per-call credentials that send tok with every
// call. They do not ask for a secure transport: TLS is a setting of the
// connection, not of the token.
func Credentials(tok string) credentials.PerRPCCredentials { return bearer(tok) }

type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{MetadataKey: Bearer + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }
