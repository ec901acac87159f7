package hwmon

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// StallAfter is how long one attribute's read may take before the sample
// gives up on it and reads the chip's other channels without it: a driver
// waiting on a stuck I2C bus blocks read(2) for as long as the bus hangs,
// and nothing can interrupt it. It is halved as needed to leave the sample
// within its deadline (25 ms at a 100 ms interval). Healthy reads take
// microseconds; slow controllers (nct6775 refreshing its cache, an ACPI
// power meter) a few milliseconds to tens.
const StallAfter = 250 * time.Millisecond

// flight is the state of one attribute's reads, shared by every Sensor
// that reads it (a rediscovery makes new Sensors for the same files), so
// that a read stuck in the kernel is never joined by a second one.
type flight struct {
	mu    sync.Mutex
	busy  *Sensor   // the Sensor whose read is in progress, possibly stuck
	since time.Time // when it began
	// closeAfter is set by Close while busy's read is stuck: the file is
	// closed once the read returns, never from under it.
	closeAfter bool
}

// acquire marks a read of the attribute by se as in progress, unless one
// is already.
func (f *flight) acquire(se *Sensor, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy != nil {
		return false
	}
	f.busy, f.since = se, now
	return true
}

// release ends the read in progress, closing its file if Close came
// meanwhile.
func (f *flight) release() {
	f.mu.Lock()
	se, closeNow := f.busy, f.closeAfter
	f.busy, f.closeAfter = nil, false
	f.mu.Unlock()
	if closeNow {
		se.Channel.Close()
	}
}

// close closes se's file now, or, while a read of it is stuck, once the
// read returns.
func (se *Sensor) close() {
	if f := se.flight; f != nil {
		f.mu.Lock()
		if f.busy == se {
			f.closeAfter = true
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
	se.Channel.Close()
}

// outcome is what a sample made of one channel.
type outcome uint8

const (
	outRead    outcome = iota // read (value or error in the Sensor)
	outBusy                   // an earlier read of it is still stuck
	outStalled                // its read this tick took longer than StallAfter
	outUnread                 // the sample's deadline came first
)

// readJob is one goroutine's reading of a chip's channels in order, from
// one index on. A read that stalls leaves the job to its goroutine, which
// ends once the read returns, and a new job reads the rest of the chip.
type readJob struct {
	c       *chip
	refresh bool
	stuck   *atomic.Int64 // the source's count of goroutines stuck in a read
	out     []outcome     // per channel, written before cur moves past it
	cur     atomic.Int32  // index of the channel being read
	since   atomic.Int64  // when its read began, Unix ns
	state   atomic.Int32  // jobRunning, jobDone or jobAbandoned
	done    chan struct{} // receives when every channel is read
}

const (
	jobRunning int32 = iota
	jobDone
	jobAbandoned
)

func (j *readJob) run(from int) {
	for i := from; i < len(j.c.chans); i++ {
		se := j.c.chans[i]
		now := time.Now()
		j.since.Store(now.UnixNano())
		j.cur.Store(int32(i))
		if !se.flight.acquire(se, now) {
			j.out[i] = outBusy
		} else {
			j.out[i] = outRead
			se.read(j.refresh)
			se.flight.release()
		}
		if j.state.Load() == jobAbandoned {
			j.stuck.Add(-1)
			return
		}
	}
	if !j.state.CompareAndSwap(jobRunning, jobDone) {
		j.stuck.Add(-1)
		return
	}
	j.done <- struct{}{}
}

// read takes the sensor's value and, when refresh says so, its thresholds,
// into the Sensor, for the sample to make a point of.
func (se *Sensor) read(refresh bool) {
	se.val, se.err = se.Read()
	se.limErr = nil
	if se.err == nil && refresh && se.Kind == Temp {
		se.Limits, se.limErr = se.ReadLimits()
	}
}

// readChip reads c's channels on a goroutine, so that one that blocks
// costs only its own reading: after stallAfter without an answer it is
// left to its goroutine (counted in stuck until the read returns) and the
// rest of the chip is read by a new one. A channel whose earlier read is
// still stuck is not read again. Every channel ends with an outcome in
// c.out.
func (s *Source) readChip(ctx context.Context, c *chip, refresh bool) {
	c.stallAfter = s.stallAfter
	if dl, ok := ctx.Deadline(); ok {
		c.stallAfter = max(min(c.stallAfter, time.Until(dl)/2), time.Millisecond)
	}
	c.out = c.out[:0]
	for range c.chans {
		c.out = append(c.out, outUnread)
	}
	for from := 0; from < len(c.chans) && ctx.Err() == nil; {
		j := c.idle
		if j == nil {
			j = &readJob{c: c, stuck: &s.stuck, out: make([]outcome, len(c.chans)), done: make(chan struct{}, 1)}
		}
		c.idle = nil
		j.refresh = refresh
		j.state.Store(jobRunning)
		j.cur.Store(int32(from))
		j.since.Store(time.Now().UnixNano())
		go j.run(from)
		k, finished := s.await(ctx, j, c.stallAfter)
		if finished {
			copy(c.out[from:], j.out[from:])
			c.idle = j
			return
		}
		// j is left to its stuck read; what it read before is kept.
		copy(c.out[from:k], j.out[from:k])
		if ctx.Err() != nil {
			return // what it had not reached is lost this tick
		}
		c.out[k] = outStalled
		from = k + 1
	}
}

// await waits for j to finish. When its current read has taken stallAfter,
// or ctx ends, it abandons j and returns the index j was reading.
func (s *Source) await(ctx context.Context, j *readJob, stallAfter time.Duration) (k int, finished bool) {
	t := s.timer
	t.Reset(stallAfter)
	defer t.Stop()
	for {
		select {
		case <-j.done:
			return 0, true
		case <-ctx.Done():
		case <-t.C:
			since := time.Unix(0, j.since.Load())
			if wait := stallAfter - time.Since(since); wait > 0 {
				t.Reset(wait)
				continue
			}
		}
		if !j.state.CompareAndSwap(jobRunning, jobAbandoned) {
			<-j.done // it finished as we gave up on it
			return 0, true
		}
		s.stuck.Add(1)
		return int(j.cur.Load()), false
	}
}

// emit appends the points of the channels c read this sample, and records
// why each other channel has no reading.
func emit(r *sysfs.Reading, c *chip) {
	for i, se := range c.chans {
		switch c.out[i] {
		case outRead:
			if se.err != nil {
				r.FailRead(fmt.Errorf("%s %s %s: %w", schema.Hwmon, c.id, se.Name, se.err))
				continue
			}
			if se.limErr != nil {
				r.Fail(fmt.Errorf("%s %s %s: %w", schema.Hwmon, c.id, se.Name, se.limErr))
			}
			r.Points = append(r.Points, sensorPoint(r, schema.Hwmon, se, se.val, schema.FieldMaxC))
		case outBusy:
			// The same words every tick while it is stuck: the collector
			// logs an error again only when it changes.
			r.Fail(fmt.Errorf("%s %s %s: stalled: the read of %s begun at %s has not returned (a driver waiting on its bus); it is not read again until it does",
				schema.Hwmon, c.id, se.Name, se.Input, se.flight.sinceNow().UTC().Format("15:04:05.000 UTC")))
		case outStalled:
			r.Fail(fmt.Errorf("%s %s %s: stalled: no answer from %s within %v; its reading is left out until it answers",
				schema.Hwmon, c.id, se.Name, se.Input, c.stallAfter.Round(time.Millisecond)))
		case outUnread:
			r.Fail(fmt.Errorf("%s %s %s: not read: the sample's deadline came first", schema.Hwmon, c.id, se.Name))
		}
	}
}

// sinceNow is when the read in progress began (now when none is).
func (f *flight) sinceNow() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy == nil {
		return time.Now()
	}
	return f.since
}

// Stalled returns how many hwmon attributes have a read stuck in the
// kernel now (one goroutine each, at most one per attribute). The
// collector reports it in collector_source's stalled_reads.
func (s *Source) Stalled() int { return int(s.stuck.Load()) }

// shareFlights gives each channel of chips the flight of its attribute,
// keeping the flight of an attribute read before (whose read may be stuck
// still), so that a rediscovery never starts a second read of it.
func (s *Source) shareFlights(chips []*chip) {
	old := s.flights
	s.flights = make(map[string]*flight, len(old))
	for _, c := range chips {
		for _, se := range c.chans {
			f := old[se.Input]
			if f == nil {
				f = &flight{}
			}
			s.flights[se.Input] = f
			se.flight = f
		}
	}
}
