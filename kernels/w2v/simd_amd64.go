package w2v

// laneAddBlocks adds x[j]*y[j] to lane j mod 32 for blocks*32 elements
// (simd_amd64.s: SSE, whose separate multiply and add round as Go's
// float32 arithmetic does).
//
//go:noescape
func laneAddBlocks(p *[32]float32, x, y *float32, blocks int)

// pairQuads is pair's update for 4*quads elements (simd_amd64.s).
//
//go:noescape
func pairQuads(c, o *float32, quads int, grad float32)

// dotLanes is the warp layout's dot product of blocks*32 elements, lane
// sums and butterfly (simd_amd64.s).
//
//go:noescape
func dotLanes(x, y *float32, blocks int) float32

// axpyQuads is axpy for 4*quads elements (simd_amd64.s).
//
//go:noescape
func axpyQuads(y, x *float32, quads int, a float32)
