#include "textflag.h"

// func addF32ToF64(dst *float64, src *float32, blocks int)
// For each block of 8 elements: dst[j] = dst[j] + float64(src[j]). The
// conversion is exact; ADDPD rounds each sum as a scalar float64 add does.
TEXT ·addF32ToF64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ blocks+16(FP), CX
	TESTQ CX, CX
	JEQ done
loop:
	CVTPS2PD 0(SI), X0
	CVTPS2PD 8(SI), X1
	CVTPS2PD 16(SI), X2
	CVTPS2PD 24(SI), X3
	MOVUPD 0(DI), X4
	MOVUPD 16(DI), X5
	MOVUPD 32(DI), X6
	MOVUPD 48(DI), X7
	ADDPD X0, X4
	ADDPD X1, X5
	ADDPD X2, X6
	ADDPD X3, X7
	MOVUPD X4, 0(DI)
	MOVUPD X5, 16(DI)
	MOVUPD X6, 32(DI)
	MOVUPD X7, 48(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNE loop
done:
	RET
