package main

import (
	"fmt"
	"io"

	"github.com/heatsink-hpc/heatsink/recordings"
)

// reportImport lists, per file, what was read, what was skipped and why.
func reportImport(w io.Writer, res *recordings.Result) {
	const show = 20
	for _, fr := range res.Files {
		fmt.Fprintf(w, "%s: %s, %d points", fr.Path, fr.Format, fr.Points)
		if fr.Precision != "" {
			fmt.Fprintf(w, ", precision %s", fr.Precision)
		}
		if len(fr.Phases) > 0 {
			fmt.Fprintf(w, ", %d phases", len(fr.Phases))
		}
		fmt.Fprintf(w, ", %s skipped\n", count(len(fr.Bad), "line"))
		for i, b := range fr.Bad {
			if i == show {
				fmt.Fprintf(w, "  ... and %d more skipped lines\n", len(fr.Bad)-show)
				break
			}
			fmt.Fprintf(w, "  skipped %v\n", b)
		}
		for _, warn := range fr.Warnings {
			fmt.Fprintf(w, "  note: %s\n", warn)
		}
	}
}

const importLong = `import reads telemetry recorded by other tools and writes it as heatsink
points, into a run directory (--out) and/or InfluxDB (--influx-url ...):

  line protocol      InfluxDB line protocol, e.g. Telegraf's file output; the
                     timestamp precision is detected per file (--precision
                     overrides); Telegraf's nvidia_smi input becomes gpu points
  nvidia-smi CSV     nvidia-smi --query-gpu=timestamp,index,...,power.draw,...
                     --format=csv[,nounits] logs; timestamps are read in
                     --timezone (default local); [N/A] readings are left out
  LibSensorsTools    the JSON of the reference study's harness; its timestamps
                     count seconds from the tool's start, so give --start; its
                     events become the phases baseline, load and cooldown

The format is detected from each file's content (--format forces one), and a
file compressed with gzip (logrotate's .gz) is read as it is. For recordings
without phases, --phase NAME=START..END sets them (times in RFC 3339 or
"2006-01-02 15:04:05", or offsets from the recording's start such as
0s..30m); phases are written to run.json and as event points. A line or row
that cannot be read is reported with its file and line and skipped.`
