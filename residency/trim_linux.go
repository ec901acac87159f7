package residency

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Trim unmaps the clean pages of the running executable's read-only
// mappings (code, constants, the function tables) and returns how many
// resident KiB they held. The pages stay in the page cache, shared and
// reclaimable; those the process still runs fault back in on first touch,
// a minor fault each. Writable and written (copy-on-write) mappings are
// never touched.
func Trim() (uint64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("trim resident pages: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("trim resident pages: %w", err)
	}
	maps, err := ParseSmaps(f)
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("trim resident pages: /proc/self/smaps: %w", err)
	}
	exe = strings.TrimSuffix(exe, " (deleted)")
	var kib uint64
	for _, m := range maps {
		if strings.TrimSuffix(m.Path, " (deleted)") != exe || !m.Clean() || m.RssKiB == 0 {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(m.Start), uintptr(m.End-m.Start), syscall.MADV_DONTNEED); errno != 0 {
			return kib, fmt.Errorf("trim resident pages: madvise %x-%x %s: %w", m.Start, m.End, m.Perms, errno)
		}
		kib += m.RssKiB
	}
	return kib, nil
}
