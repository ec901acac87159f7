//go:build !amd64

package w2v

import "unsafe"

func laneAddBlocks(p *[32]float32, x, y *float32, blocks int) {
	xs := unsafe.Slice(x, 32*blocks)
	ys := unsafe.Slice(y, 32*blocks)
	for b := 0; b < blocks; b++ {
		laneAddGo(p, (*[32]float32)(xs[32*b:]), (*[32]float32)(ys[32*b:]))
	}
}

func pairQuads(c, o *float32, quads int, grad float32) {
	pairGo(unsafe.Slice(c, 4*quads), unsafe.Slice(o, 4*quads), grad)
}

func dotLanes(x, y *float32, blocks int) float32 {
	var p [32]float32
	laneAddBlocks(&p, x, y, blocks)
	return butterfly(&p)
}

func axpyQuads(y, x *float32, quads int, a float32) {
	axpyGo(unsafe.Slice(y, 4*quads), unsafe.Slice(x, 4*quads), a)
}
