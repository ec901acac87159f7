#include "textflag.h"

// func laneAddBlocks(p *[32]float32, x, y *float32, blocks int)
// For each block of 32 elements: p[j] = p[j] + x[j]*y[j], a multiply and
// an add each rounded (SSE: MULPS, ADDPS; no fused multiply-add).
TEXT ·laneAddBlocks(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ blocks+24(FP), CX
	MOVUPS 0(DI), X0
	MOVUPS 16(DI), X1
	MOVUPS 32(DI), X2
	MOVUPS 48(DI), X3
	MOVUPS 64(DI), X4
	MOVUPS 80(DI), X5
	MOVUPS 96(DI), X6
	MOVUPS 112(DI), X7
	TESTQ CX, CX
	JEQ done
loop:
	MOVUPS 0(SI), X8
	MOVUPS 0(DX), X9
	MULPS X9, X8
	ADDPS X8, X0
	MOVUPS 16(SI), X10
	MOVUPS 16(DX), X11
	MULPS X11, X10
	ADDPS X10, X1
	MOVUPS 32(SI), X12
	MOVUPS 32(DX), X13
	MULPS X13, X12
	ADDPS X12, X2
	MOVUPS 48(SI), X14
	MOVUPS 48(DX), X15
	MULPS X15, X14
	ADDPS X14, X3
	MOVUPS 64(SI), X8
	MOVUPS 64(DX), X9
	MULPS X9, X8
	ADDPS X8, X4
	MOVUPS 80(SI), X10
	MOVUPS 80(DX), X11
	MULPS X11, X10
	ADDPS X10, X5
	MOVUPS 96(SI), X12
	MOVUPS 96(DX), X13
	MULPS X13, X12
	ADDPS X12, X6
	MOVUPS 112(SI), X14
	MOVUPS 112(DX), X15
	MULPS X15, X14
	ADDPS X14, X7
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ CX
	JNE loop
done:
	MOVUPS X0, 0(DI)
	MOVUPS X1, 16(DI)
	MOVUPS X2, 32(DI)
	MOVUPS X3, 48(DI)
	MOVUPS X4, 64(DI)
	MOVUPS X5, 80(DI)
	MOVUPS X6, 96(DI)
	MOVUPS X7, 112(DI)
	RET

// func pairQuads(c, o *float32, quads int, grad float32)
// For 4*quads elements: c' = c + grad*o, o' = o + grad*c (the old c), each
// product and sum rounded on its own.
TEXT ·pairQuads(SB), NOSPLIT, $0-28
	MOVQ c+0(FP), SI
	MOVQ o+8(FP), DI
	MOVQ quads+16(FP), CX
	MOVSS grad+24(FP), X15
	SHUFPS $0, X15, X15
	TESTQ CX, CX
	JEQ pdone
ploop:
	MOVUPS 0(SI), X0
	MOVUPS 0(DI), X1
	MOVAPS X1, X2
	MULPS X15, X2
	MOVAPS X0, X3
	MULPS X15, X3
	ADDPS X2, X0
	ADDPS X3, X1
	MOVUPS X0, 0(SI)
	MOVUPS X1, 0(DI)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNE ploop
pdone:
	RET

// func dotLanes(x, y *float32, blocks int) float32
// The warp's dot product of blocks*32 elements: lane j (of 32) sums
// x[j+32k]*y[j+32k] over k from zero, then the lanes are reduced as
// __shfl_xor_sync's butterfly does (lane j adds lane j^s for s = 16, 8,
// 4, 2, 1) and lane 0's sum is returned.
TEXT ·dotLanes(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DX
	MOVQ blocks+16(FP), CX
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORPS X4, X4
	XORPS X5, X5
	XORPS X6, X6
	XORPS X7, X7
	TESTQ CX, CX
	JEQ reduce
dloop:
	MOVUPS 0(SI), X8
	MOVUPS 0(DX), X9
	MULPS X9, X8
	ADDPS X8, X0
	MOVUPS 16(SI), X10
	MOVUPS 16(DX), X11
	MULPS X11, X10
	ADDPS X10, X1
	MOVUPS 32(SI), X12
	MOVUPS 32(DX), X13
	MULPS X13, X12
	ADDPS X12, X2
	MOVUPS 48(SI), X14
	MOVUPS 48(DX), X15
	MULPS X15, X14
	ADDPS X14, X3
	MOVUPS 64(SI), X8
	MOVUPS 64(DX), X9
	MULPS X9, X8
	ADDPS X8, X4
	MOVUPS 80(SI), X10
	MOVUPS 80(DX), X11
	MULPS X11, X10
	ADDPS X10, X5
	MOVUPS 96(SI), X12
	MOVUPS 96(DX), X13
	MULPS X13, X12
	ADDPS X12, X6
	MOVUPS 112(SI), X14
	MOVUPS 112(DX), X15
	MULPS X15, X14
	ADDPS X14, X7
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ CX
	JNE dloop
reduce:
	ADDPS X4, X0 // s = 16: lanes 0-15
	ADDPS X5, X1
	ADDPS X6, X2
	ADDPS X7, X3
	ADDPS X2, X0 // s = 8: lanes 0-7
	ADDPS X3, X1
	ADDPS X1, X0 // s = 4: lanes 0-3
	MOVHLPS X0, X1
	ADDPS X1, X0 // s = 2: lanes 0-1
	MOVAPS X0, X1
	SHUFPS $0x55, X1, X1
	ADDSS X1, X0 // s = 1: lane 0
	MOVSS X0, ret+24(FP)
	RET

// func axpyQuads(y, x *float32, quads int, a float32)
// For 4*quads elements: y' = y + a*x, the product rounded before the add
// (MULPS, ADDPS), as Go's float32 y += a*x; four quads an iteration.
TEXT ·axpyQuads(SB), NOSPLIT, $0-28
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ quads+16(FP), CX
	MOVSS a+24(FP), X15
	SHUFPS $0, X15, X15
aloop4:
	CMPQ CX, $4
	JLT aloop1
	MOVUPS 0(SI), X0
	MOVUPS 16(SI), X1
	MOVUPS 32(SI), X2
	MOVUPS 48(SI), X3
	MULPS X15, X0
	MULPS X15, X1
	MULPS X15, X2
	MULPS X15, X3
	MOVUPS 0(DI), X4
	MOVUPS 16(DI), X5
	MOVUPS 32(DI), X6
	MOVUPS 48(DI), X7
	ADDPS X0, X4
	ADDPS X1, X5
	ADDPS X2, X6
	ADDPS X3, X7
	MOVUPS X4, 0(DI)
	MOVUPS X5, 16(DI)
	MOVUPS X6, 32(DI)
	MOVUPS X7, 48(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $4, CX
	JMP aloop4
aloop1:
	TESTQ CX, CX
	JEQ adone
	MOVUPS 0(SI), X0
	MULPS X15, X0
	MOVUPS 0(DI), X4
	ADDPS X0, X4
	MOVUPS X4, 0(DI)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JMP aloop1
adone:
	RET
