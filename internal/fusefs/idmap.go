package fusefs

import (
	"os/user"
	"strconv"
	"sync"
)

// nobody is the uid and gid shown for an owner no local name maps to.
const nobody = 65534

// idMap maps the service's owner and group names to local uids and gids
// and back, by the host's user database (NSS), caching both ways. A name
// that is a number is that id; an id with no name is named by its number,
// so that a chown to an id this host cannot name still round-trips.
type idMap struct {
	mu struct {
		sync.Mutex
		uid, gid     map[string]uint32
		uname, gname map[uint32]string
	}
}

func newIDMap() *idMap {
	m := &idMap{}
	m.mu.uid, m.mu.gid = map[string]uint32{}, map[string]uint32{}
	m.mu.uname, m.mu.gname = map[uint32]string{}, map[uint32]string{}
	return m
}

func (m *idMap) uidOf(name string) uint32 {
	return m.id(name, m.mu.uid, func(n string) (string, error) {
		u, err := user.Lookup(n)
		if err != nil {
			return "", err
		}
		return u.Uid, nil
	})
}

func (m *idMap) gidOf(name string) uint32 {
	return m.id(name, m.mu.gid, func(n string) (string, error) {
		g, err := user.LookupGroup(n)
		if err != nil {
			return "", err
		}
		return g.Gid, nil
	})
}

func (m *idMap) id(name string, cache map[string]uint32, look func(string) (string, error)) uint32 {
	m.mu.Lock()
	id, ok := cache[name]
	m.mu.Unlock()
	if ok {
		return id
	}
	id = nobody
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		id = uint32(n)
	} else if s, err := look(name); err == nil {
		if n, err := strconv.ParseUint(s, 10, 32); err == nil {
			id = uint32(n)
		}
	}
	m.mu.Lock()
	cache[name] = id
	m.mu.Unlock()
	return id
}

func (m *idMap) userName(uid uint32) string {
	return m.name(uid, m.mu.uname, func(s string) (string, error) {
		u, err := user.LookupId(s)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

func (m *idMap) groupName(gid uint32) string {
	return m.name(gid, m.mu.gname, func(s string) (string, error) {
		g, err := user.LookupGroupId(s)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

func (m *idMap) name(id uint32, cache map[uint32]string, look func(string) (string, error)) string {
	m.mu.Lock()
	n, ok := cache[id]
	m.mu.Unlock()
	if ok {
		return n
	}
	s := strconv.FormatUint(uint64(id), 10)
	n = s
	if got, err := look(s); err == nil {
		n = got
	}
	m.mu.Lock()
	cache[id] = n
	m.mu.Unlock()
	return n
}
