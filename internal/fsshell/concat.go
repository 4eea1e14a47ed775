package fsshell

import "fmt"

// concatUsage ends -concat's refusals, as Hadoop's Concat says its usage.
const concatUsage = "<target path> <src path> <src path> ..."

// runConcat is -concat <target path> <src path> <src path> ..., Hadoop's
// Concat: the sources appended to the target, in order, and removed
// (client.Concat: the service moves their blocks, no byte is copied). As
// in Hadoop it wants two sources at least, and every path a file.
func runConcat(sh *shell, args []string) error {
	if err := sh.connect(); err != nil {
		return err
	}
	items := sh.expandAll(args)
	if sh.usage != nil {
		return nil
	}
	switch {
	case len(items) < 1:
		return fmt.Errorf("Target path not specified. %s", concatUsage)
	case len(items) < 3:
		return fmt.Errorf("The number of source paths is less than 2. %s", concatUsage)
	}
	target, srcs := items[0], items[1:]
	// Hadoop names the paths qualified (PathData.path).
	if !target.exists() || target.isDir() {
		return fmt.Errorf("Target path %s does not exist or is not file.", sh.qualified(target.ns, target.abs))
	}
	uris := make([]string, len(srcs))
	for i, s := range srcs {
		if !s.exists() || s.isDir() {
			return fmt.Errorf("%s does not exist or is not file.", sh.qualified(s.ns, s.abs))
		}
		uris[i] = s.uri()
	}
	if err := sh.fs.Concat(sh.ctx, target.uri(), uris); err != nil {
		return fmt.Errorf("%s", message(sh.explain(target.text, target.abs, err)))
	}
	return nil
}
