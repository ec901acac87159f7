// Command heatsink runs HPC and GPU workloads under thermal monitoring and
// turns the telemetry into answers: heat accumulation, return to idle,
// cooling energy, immersion against air.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	err := newRootCmd().Execute()
	if err == nil {
		return
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.err != nil {
			fmt.Fprintln(os.Stderr, "heatsink:", ex.err)
		}
		os.Exit(ex.code)
	}
	fmt.Fprintln(os.Stderr, "heatsink:", err)
	os.Exit(1)
}

// exitError carries an exit status through cobra, e.g. the job's own status
// for `heatsink run`.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit status %d", e.code)
}

// count says n nouns, in the singular for one.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
