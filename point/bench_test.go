package point

import (
	"bytes"
	"fmt"
	"testing"
)

// benchLines is a day-shaped recording: an 8-GPU node's gpu points, 19 fields each.
func benchLines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "gpu,gpu=%d,host=node01,model=NVIDIA\\ H100\\ 80GB\\ HBM3,uuid=GPU-468c23fa-b71c-be61-3d27-6e1a606afc0%d "+
			"temp_c=%d,mem_temp_c=45,power_w=512.25,energy_j=123456.5,power_limit_w=700,util_pct=100,mem_util_pct=38,"+
			"mem_used_bytes=503316480i,mem_total_bytes=85520809984i,pstate=0i,sm_clock_mhz=1980,mem_clock_mhz=2619,"+
			"clock_event_reasons=4i,throttle_thermal=false,throttle_power=true,slowdown_c=89,shutdown_c=95,gpu_max_c=87,mem_max_c=95 %d\n",
			i%8, i%8, 40+i%30, 1_700_000_000_000_000_000+int64(i/8)*1_000_000_000)
	}
	return b.Bytes()
}

func BenchmarkReader(b *testing.B) {
	data := benchLines(10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), "bench")
		n := 0
		for {
			_, lerr, ok := r.Next()
			if !ok {
				break
			}
			if lerr != nil {
				b.Fatal(lerr)
			}
			n++
		}
		if n != 10_000 {
			b.Fatalf("%d points", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/line")
}
