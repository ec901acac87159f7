package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
)

// A reload applies only a complete, deliberate file: a deploy that writes
// the configuration in place, or an editor caught mid-save, must never
// turn off the InfluxDB sink or the alert rules of a node that is running.
const (
	// settleGap is how far apart two reads of the file must agree.
	settleGap = 250 * time.Millisecond
	// settleLimit is how long a file may go on changing before the reload
	// gives up and keeps the running configuration.
	settleLimit = 5 * time.Second
)

// readSettled returns the file at path once two reads gap apart agree in
// content, size and modification time: a writer still at work changes at
// least one of them. It gives up after limit.
func readSettled(ctx context.Context, path string, gap, limit time.Duration) ([]byte, error) {
	read := func() ([]byte, os.FileInfo, error) {
		st, err := os.Stat(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("read config: %w", err)
		}
		return b, st, nil
	}
	b, st, err := read()
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(gap)
	defer t.Stop()
	for end := time.Now().Add(limit); ; {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		b2, st2, err := read()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(b, b2) && st.Size() == st2.Size() && st.ModTime().Equal(st2.ModTime()) {
			return b2, nil
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("%s was still being written %v after the reload began (it changed between two reads %v apart): not applied", path, limit, gap)
		}
		b, st = b2, st2
		t.Reset(gap)
	}
}

// endsMidLine refuses a file whose last line has no newline: a line cut
// by a write in progress (`threshold: 9` of `threshold: 95`) still parses,
// and every editor and tool ends a file it wrote with one.
func endsMidLine(path string, file []byte) error {
	if len(file) > 0 && file[len(file)-1] != '\n' {
		return fmt.Errorf("%s ends in the middle of a line (no newline after its last line), as a file caught mid-write does: not applied; end the file with a newline", path)
	}
	return nil
}

// refuseRemovals returns an error naming every key of old's file that
// cfg's no longer writes (an InfluxDB sink, an alert rule, a PDU, a
// rule's `for:`), unless cfg says it drops it on purpose: `removes:`
// names it or a key above it, or the file writes a key above it as an
// explicitly empty list or mapping (`rules: []`). A file cut short by a
// write in progress loses exactly its last keys, and would otherwise
// turn them off or back to their defaults.
func refuseRemovals(old, cfg *configs.Config) error {
	was, _ := old.KeyPaths()
	now, empty := cfg.KeyPaths()
	if was == nil {
		return nil // the running configuration came from no file
	}
	has := map[string]bool{}
	for _, p := range now {
		has[p] = true
	}
	under := func(p string, tops []string) bool {
		for _, t := range tops {
			if p == t || strings.HasPrefix(p, t+".") {
				return true
			}
		}
		return false
	}
	// A dropped key is dropped on purpose when removes: or an empty []
	// or {} above covers it, or when everything dropped under it is; the
	// keys under a key come after it, so children are decided first.
	parent := map[string]string{}
	for i, p := range was {
		for _, q := range was[:i] {
			if strings.HasPrefix(p, q+".") && len(q) > len(parent[p]) {
				parent[p] = q
			}
		}
	}
	ok := map[string]bool{}
	kids, bad := map[string]int{}, map[string]int{}
	for i := len(was) - 1; i >= 0; i-- {
		p := was[i]
		if has[p] || under(p, []string{"removes"}) {
			has[p] = true // removes: itself says what goes, and may go
			continue
		}
		ok[p] = under(p, cfg.Removes) || under(p, empty) || (kids[p] > 0 && bad[p] == 0)
		if q, found := parent[p]; found {
			kids[q]++
			if !ok[p] {
				bad[q]++
			}
		}
	}
	// Name the topmost keys refused, not every key under them.
	var refused []string
	for _, p := range was {
		if q, found := parent[p]; !has[p] && !ok[p] && (!found || has[q]) {
			refused = append(refused, p)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("the file no longer mentions %s, as a file cut short by a write in progress would not: not applied; "+
		"to drop them on purpose, list them under removes: (or write the key above them as [] or {})", strings.Join(refused, ", "))
}
