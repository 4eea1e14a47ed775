package metabench

import "strconv"

// fileSet names a set of files (or directories) that one phase made, one
// per operation of each thread: name(j) is the j-th entry of a thread's
// directory. Names carry the id of the step that made them, so two create
// phases in one run never collide.
type fileSet struct {
	kind    byte // 'f' create, 'w' create512, 'd' mkdir
	id      int  // the index of the step that made the set
	size    int  // content bytes of each file
	renames int  // how many rename phases moved the set
}

func newSet(op Op, id int) fileSet {
	switch op {
	case OpCreate512:
		return fileSet{kind: 'w', id: id, size: InlineSize}
	case OpMkdir:
		return fileSet{kind: 'd', id: id}
	}
	return fileSet{kind: 'f', id: id}
}

// name returns the j-th name of the set, e.g. "f0-17" or, renamed once,
// "f0-17.r1".
func (s fileSet) name(j int) string {
	b := make([]byte, 0, 24)
	b = append(b, s.kind)
	b = strconv.AppendInt(b, int64(s.id), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(j), 10)
	if s.renames > 0 {
		b = append(b, ".r"...)
		b = strconv.AppendInt(b, int64(s.renames), 10)
	}
	return string(b)
}

// renamed is the set after one more rename phase.
func (s fileSet) renamed() fileSet {
	s.renames++
	return s
}

// step is one phase of a thread count's run.
type step struct {
	op    Op
	timed bool    // false: a preparation, not reported
	set   fileSet // the set the step makes (create, create512, mkdir) or acts on
}

// plan turns the requested operations into the steps of one thread count.
// Phases that act on files when there are none (the set was deleted, or no
// create phase came first) are preceded by an untimed create: create512 for
// open, so that it reads inline content, create otherwise.
func plan(ops []Op) []step {
	var steps []step
	var cur fileSet
	have := false
	for _, op := range ops {
		if op.needsFiles() && !have {
			prep := OpCreate
			if op == OpOpen {
				prep = OpCreate512
			}
			cur, have = newSet(prep, len(steps)), true
			steps = append(steps, step{op: prep, set: cur})
		}
		switch {
		case op.makesFiles() || op == OpMkdir:
			s := newSet(op, len(steps))
			steps = append(steps, step{op: op, timed: true, set: s})
			if op.makesFiles() {
				cur, have = s, true
			}
		default:
			steps = append(steps, step{op: op, timed: true, set: cur})
			switch op {
			case OpRename:
				cur = cur.renamed()
			case OpDelete:
				have = false
			}
		}
	}
	return steps
}
