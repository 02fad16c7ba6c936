#include "textflag.h"

// func stopIndex(b []byte) int
TEXT ·stopIndex(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	ANDQ $~31, CX
	XORQ AX, AX
	VMOVDQU quotes<>(SB), Y1
	VMOVDQU backslashes<>(SB), Y2
	VMOVDQU controls<>(SB), Y3

loop:
	CMPQ AX, CX
	JAE  none
	VMOVDQU (SI)(AX*1), Y0
	VPCMPEQB Y0, Y1, Y4
	VPCMPEQB Y0, Y2, Y5
	// A control character is a byte c with min(c, 0x1f) == c.
	VPMINUB  Y0, Y3, Y6
	VPCMPEQB Y0, Y6, Y6
	VPOR     Y4, Y5, Y4
	VPOR     Y4, Y6, Y4
	VPMOVMSKB Y4, BX
	TESTL BX, BX
	JNZ   found
	ADDQ  $32, AX
	JMP   loop

found:
	BSFL BX, BX
	ADDQ BX, AX
	MOVQ AX, ret+24(FP)
	VZEROUPPER
	RET

none:
	MOVQ $-1, ret+24(FP)
	VZEROUPPER
	RET

DATA quotes<>+0(SB)/8, $0x2222222222222222
DATA quotes<>+8(SB)/8, $0x2222222222222222
DATA quotes<>+16(SB)/8, $0x2222222222222222
DATA quotes<>+24(SB)/8, $0x2222222222222222
GLOBL quotes<>(SB), RODATA|NOPTR, $32

DATA backslashes<>+0(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+8(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+16(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA backslashes<>+24(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL backslashes<>(SB), RODATA|NOPTR, $32

DATA controls<>+0(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA controls<>+8(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA controls<>+16(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA controls<>+24(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL controls<>(SB), RODATA|NOPTR, $32
