package client

import (
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"os"

	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorruptPage is a short-circuit read whose CRC did not match.
var errCorruptPage = errors.New("client: cached page failed its CRC")

// scPool holds idle connections to one worker's short-circuit socket.
type scPool struct {
	socket string
	idle   chan *net.UnixConn
}

func newSCPool(socket string) *scPool {
	return &scPool{socket: socket, idle: make(chan *net.UnixConn, 16)}
}

func (p *scPool) get() (*net.UnixConn, error) {
	select {
	case c := <-p.idle:
		return c, nil
	default:
	}
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: p.socket, Net: "unix"})
}

func (p *scPool) put(c *net.UnixConn) {
	select {
	case p.idle <- c:
	default:
		c.Close()
	}
}

func (p *scPool) close() {
	for {
		select {
		case c := <-p.idle:
			c.Close()
		default:
			return
		}
	}
}

// shortCircuitRead fills buf from [off, off+len(buf)) of the block by
// reading the worker's cache file itself. The worker makes the range
// cached and passes the file; every page read is checked against its CRC,
// and a page that fails is reported so that the worker fetches it again.
func shortCircuitRead(p *scPool, ref *pb.BlockRef, buf []byte, off int64) error {
	err := scReadOnce(p, ref, buf, off, false)
	if errors.Is(err, errCorruptPage) {
		err = scReadOnce(p, ref, buf, off, true)
	}
	return err
}

func scReadOnce(p *scPool, ref *pb.BlockRef, buf []byte, off int64, invalidate bool) error {
	conn, err := p.get()
	if err != nil {
		return err
	}
	req := &pb.ShortCircuitRequest{Block: ref, Offset: uint64(off), Length: uint64(len(buf)), Invalidate: invalidate}
	resp := &pb.ShortCircuitResponse{}
	if err := scproto.Write(conn, req, nil); err != nil {
		conn.Close()
		return err
	}
	fd, err := scproto.ReadFD(conn, resp)
	if err != nil {
		conn.Close()
		return err
	}
	p.put(conn)
	if !resp.Ok || fd < 0 {
		closeFD(fd)
		return fmt.Errorf("short-circuit read refused: %s", resp.Error)
	}
	f := os.NewFile(uintptr(fd), "strata-cache")
	defer f.Close()
	return readPages(f, resp, buf, off)
}

// readPages reads the pages covering [off, off+len(buf)) from f, checks
// their CRCs and copies the range into buf. Aligned reads land in buf
// directly.
func readPages(f *os.File, resp *pb.ShortCircuitResponse, buf []byte, off int64) error {
	ps, start := int64(resp.PageSize), int64(resp.FirstPage)
	if ps <= 0 || start%ps != 0 || start > off {
		return errors.New("short-circuit: malformed response")
	}
	end := off + int64(len(buf))
	pagesEnd := min(((end+ps-1)/ps)*ps, int64(resp.BlockLength))
	var pages []byte
	if start == off && pagesEnd == end {
		pages = buf
	} else {
		pages = make([]byte, pagesEnd-start)
	}
	if _, err := f.ReadAt(pages, start); err != nil {
		return fmt.Errorf("short-circuit read: %w", err)
	}
	for i := int64(0); i*ps < int64(len(pages)); i++ {
		page := pages[i*ps : min((i+1)*ps, int64(len(pages)))]
		if int(i) >= len(resp.Crcs) || crc32.Checksum(page, castagnoli) != resp.Crcs[i] {
			return errCorruptPage
		}
	}
	if &pages[0] != &buf[0] {
		copy(buf, pages[off-start:])
	}
	return nil
}

func closeFD(fd int) {
	if fd >= 0 {
		os.NewFile(uintptr(fd), "").Close()
	}
}
