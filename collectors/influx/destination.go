package influx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/spool"
)

// Destination is where a sink's points go: a server and, in it, an
// organisation and bucket (for InfluxDB 1.8, database/retention-policy;
// its organisation is ignored by the server but still part of the name,
// since nothing here can tell a 1.8 server from a 2.x one without asking).
// Each destination has its own spool, so points recorded for one never go
// to another unless an operator sends them there (`heatsink spool send`).
type Destination struct {
	URL    string
	Org    string
	Bucket string
}

// DestinationOf returns the destination c names, normalised so that two
// spellings of one server and bucket are one destination: scheme and host
// in lower case, the default port written out, no trailing slash on the
// path or on a 1.8 bucket ("db/" is "db").
func DestinationOf(c Config) (Destination, error) {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" {
		return Destination{}, fmt.Errorf("influx destination: url %q is not an http(s) URL with a host", c.URL)
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	n := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: strings.TrimRight(u.Path, "/"), RawQuery: u.RawQuery}
	return Destination{URL: n.String(), Org: c.Org, Bucket: strings.TrimRight(c.Bucket, "/")}, nil
}

// String names the destination as the spool records it, e.g.
// `http://127.0.0.1:8086 org "" bucket "heatsink/autogen"`.
func (d Destination) String() string {
	return fmt.Sprintf("%s org %q bucket %q", d.URL, d.Org, d.Bucket)
}

// dirName is the destination's spool directory under the spool root: a
// readable slug (host, port, bucket) and a hash of the whole name, which
// keeps destinations whose slugs agree apart.
func (d Destination) dirName() string {
	sum := sha256.Sum256([]byte(d.String()))
	u, _ := url.Parse(d.URL)
	slug := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, u.Host+"-"+d.Bucket)
	if len(slug) > 64 {
		slug = slug[:64]
	}
	return slug + "-" + hex.EncodeToString(sum[:6])
}

// SpoolDirOf returns the directory of the spool that holds c's points:
// one subdirectory of the spool root (sinks.influx.spool_dir, default
// DefaultSpoolDir) per destination.
func SpoolDirOf(c Config) (string, error) {
	c = c.withDefaults()
	d, err := DestinationOf(c)
	if err != nil {
		return "", err
	}
	return filepath.Join(c.SpoolDir, d.dirName()), nil
}

// warnOldLayout logs, once per sink opened, points that an older heatsink
// left in the spool root itself, where one spool served every destination:
// nobody can tell which server they were meant for, so they are never sent
// automatically, and the log says where they are and how to send them.
func warnOldLayout(root string, log *slog.Logger) {
	info, err := spool.Inspect(root)
	if errors.Is(err, fs.ErrNotExist) {
		return // a first start: no spool yet, old or new
	}
	if err != nil {
		log.Warn("influx: could not look for an older heatsink's spool in the spool root", "dir", root, "err", err)
		return
	}
	if info.UnsentPoints == 0 {
		return
	}
	attrs := []any{"dir", root, "points", info.UnsentPoints, "bytes", info.UnsentBytes}
	if !info.Oldest.IsZero() {
		attrs = append(attrs, "oldest", info.Oldest.UTC().Format(time.RFC3339))
	}
	attrs = append(attrs, "send_with", "heatsink spool send "+root+" --to URL --bucket BUCKET")
	log.Warn("influx: the spool root holds points an older heatsink recorded for no stated destination; they are not sent anywhere automatically (list them with `heatsink spool list`)", attrs...)
}
