package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Lookup returns the record of live namespace name (empty means the
// default): one in the trash is ErrNoNamespace.
func Lookup(r kv.Reader, name string) (*kvschema.Namespace, error) {
	rec, err := getNamespace(r, name)
	if err != nil {
		return nil, pathErr("namespace", name, err)
	}
	return rec, nil
}

// Record returns the record of namespace name, in the trash or not.
func Record(r kv.Reader, name string) (*kvschema.Namespace, error) {
	rec, err := getNamespaceRecord(r, name)
	if err != nil {
		return nil, pathErr("namespace", name, err)
	}
	return rec, nil
}
