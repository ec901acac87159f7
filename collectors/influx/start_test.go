package influx

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/point"
)

// An InfluxDB that is down when heatsink starts must not cost the points
// recorded until it is up: Start goes on, the spool keeps them, and they
// land once the server answers.
func TestStartGoesOnWhileInfluxDBIsDownAndDeliversLater(t *testing.T) {
	srv := influxtest.Start(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sink, err := Start(ctx, testOptions(t, srv))
	if err != nil {
		t.Fatalf("Start refused a server that is only down: %v", err)
	}
	var written []point.Point
	t0 := time.Now().Truncate(time.Second)
	for i := range 5 {
		p := point.New("gpu", t0.Add(time.Duration(i)*time.Second))
		p.AddTag("gpu", "0").AddFloat("temp_c", float64(40+i))
		written = append(written, p)
	}
	if err := sink.Write(written); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	assertLanded(t, srv, written)
}

// What cannot pass by itself is still refused at start, unless the sink
// is optional.
func TestStartRefusesWhatCannotWorkUnlessOptional(t *testing.T) {
	srv := influxtest.Start(t, influxtest.Options{Auth: true})
	for _, tc := range []struct {
		name, bucket, token string
		optional            bool
		want                string
	}{
		{"wrong token", influxtest.Bucket, "admin:wrong", false, "401"},
		{"missing bucket", "nosuchdb/autogen", srv.Token, false, "not found"},
		{"wrong token, optional", influxtest.Bucket, "admin:wrong", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(t, srv)
			o.Bucket, o.Token, o.Optional, o.DrainTimeout = tc.bucket, secret.Literal(tc.token), tc.optional, 100*time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sink, err := Start(ctx, o)
			if sink != nil {
				sink.Abort()
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Start: %v, want %q", err, tc.want)
			}
		})
	}
}
