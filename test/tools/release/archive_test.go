package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/blakesmith/ar"
	"github.com/klauspost/compress/zstd"
	rpmutils "github.com/sassoftware/go-rpmutils"
)

// entry is one path a package installs.
type entry struct {
	mode   int64 // permission bits
	dir    bool
	owner  string // user:group
	config bool   // a config file the package manager keeps the operator's edits of
	data   []byte // a regular file's content, when the reader keeps it
}

// pkg is what the test reads from a package: its paths and its
// maintainer scripts by their nfpm names (postinstall, preremove,
// postremove).
type pkg struct {
	entries map[string]*entry
	scripts map[string]string
}

// debScripts names a .deb's maintainer scripts by nfpm's names.
var debScripts = map[string]string{"postinst": "postinstall", "prerm": "preremove", "postrm": "postremove",
	"preinst": "preinstall"}

// readDeb reads a .deb: an ar archive of debian-binary, control.tar.* (the
// conffiles list and the maintainer scripts) and data.tar.*.
func readDeb(file string) (*pkg, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := &pkg{entries: map[string]*entry{}, scripts: map[string]string{}}
	var conffiles []string
	r := ar.NewReader(f)
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("ar: %w", err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		switch {
		case strings.HasPrefix(name, "control.tar"):
			err = eachTar(r, name, func(th *tar.Header, data []byte) {
				base := path.Base(th.Name)
				if base == "conffiles" {
					conffiles = strings.Fields(string(data))
				}
				if s, ok := debScripts[base]; ok {
					p.scripts[s] = string(data)
				}
			})
		case strings.HasPrefix(name, "data.tar"):
			err = eachTar(r, name, func(th *tar.Header, data []byte) {
				n := "/" + strings.TrimPrefix(strings.TrimPrefix(th.Name, "."), "/")
				n = strings.TrimSuffix(n, "/")
				if n == "" {
					return
				}
				p.entries[n] = &entry{mode: th.Mode & 0o7777, dir: th.Typeflag == tar.TypeDir,
					owner: th.Uname + ":" + th.Gname, data: data}
			})
		}
		if err != nil {
			return nil, err
		}
	}
	for _, c := range conffiles {
		e, ok := p.entries[c]
		if !ok {
			return nil, fmt.Errorf("conffile %s is not in the package", c)
		}
		e.config = true
	}
	return p, nil
}

// eachTar calls fn with each member of the compressed tar r (named by
// its ar member name), with the content of regular files.
func eachTar(r io.Reader, name string, fn func(*tar.Header, []byte)) error {
	var zr io.Reader
	switch {
	case strings.HasSuffix(name, ".gz"):
		gz, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		zr = gz
	case strings.HasSuffix(name, ".zst"):
		zs, err := zstd.NewReader(r)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zs.Close()
		zr = zs
	case strings.HasSuffix(name, ".tar"):
		zr = r
	default:
		return fmt.Errorf("%s: a compression this test does not read", name)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var data []byte
		if h.Typeflag == tar.TypeReg {
			if data, err = io.ReadAll(tr); err != nil {
				return fmt.Errorf("%s: %s: %w", name, h.Name, err)
			}
		}
		fn(h, data)
	}
}

// readRPM reads an .rpm's header: its files with their modes, owners and
// %config flags, and its scriptlets; and the content of its regular files
// from the payload.
func readRPM(file string) (*pkg, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := rpmutils.ReadRpm(f)
	if err != nil {
		return nil, fmt.Errorf("rpm: %w", err)
	}
	files, err := r.Header.GetFiles()
	if err != nil {
		return nil, fmt.Errorf("rpm files: %w", err)
	}
	p := &pkg{entries: map[string]*entry{}, scripts: map[string]string{}}
	for _, fi := range files {
		const config = rpmutils.RPMFILE_CONFIG | rpmutils.RPMFILE_NOREPLACE
		p.entries[fi.Name()] = &entry{mode: int64(fi.Mode() & 0o7777), dir: fi.Mode()&0o170000 == 0o040000,
			owner: fi.UserName() + ":" + fi.GroupName(), config: fi.Flags()&config == config}
		if fi.Flags()&rpmutils.RPMFILE_CONFIG != 0 && fi.Flags()&rpmutils.RPMFILE_NOREPLACE == 0 {
			return nil, fmt.Errorf("%s is %%config without noreplace: an upgrade would replace the operator's edits", fi.Name())
		}
	}
	for tag, name := range map[int]string{rpmutils.POSTIN: "postinstall", rpmutils.PREUN: "preremove",
		rpmutils.POSTUN: "postremove", rpmutils.PREIN: "preinstall"} {
		if s, err := r.Header.GetString(tag); err == nil && s != "" {
			p.scripts[name] = s
		}
	}
	if err := readPayload(r, p); err != nil {
		return nil, err
	}
	return p, nil
}

// readPayload keeps the content of the payload's regular files.
func readPayload(r *rpmutils.Rpm, p *pkg) error {
	pr, err := r.PayloadReaderExtended()
	if err != nil {
		return fmt.Errorf("rpm payload: %w", err)
	}
	for {
		fi, err := pr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("rpm payload: %w", err)
		}
		if pr.IsLink() {
			continue
		}
		var b bytes.Buffer
		if _, err := io.Copy(&b, pr); err != nil {
			return fmt.Errorf("rpm payload %s: %w", fi.Name(), err)
		}
		if e, ok := p.entries[fi.Name()]; ok && !e.dir {
			e.data = b.Bytes()
		}
	}
}
