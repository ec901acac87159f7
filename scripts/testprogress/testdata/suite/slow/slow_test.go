package slow

import (
	"testing"
	"time"
)

// Long enough for the formatter, asked every 200 ms, to say it runs.
func TestSlow(t *testing.T) { time.Sleep(1500 * time.Millisecond) }
