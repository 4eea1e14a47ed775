package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Lookup returns the record of namespace name (empty means the default).
func Lookup(r kv.Reader, name string) (*kvschema.Namespace, error) {
	rec, err := getNamespace(r, name)
	if err != nil {
		return nil, pathErr("namespace", name, err)
	}
	return rec, nil
}
