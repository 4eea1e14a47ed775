#include "textflag.h"

// Three chains of CRC32Q, each word loaded once into a register, stored to
// dst and fed to its chain.
#define STEP(off) \
	MOVQ off(SI), R8; \
	MOVQ off(SI)(BX*1), R9; \
	MOVQ off(SI)(R12*1), R10; \
	MOVQ R8, off(DI); \
	MOVQ R9, off(DI)(BX*1); \
	MOVQ R10, off(DI)(R12*1); \
	CRC32Q R8, AX; \
	CRC32Q R9, CX; \
	CRC32Q R10, DX

// func copyTriple(crc uint32, dst, src *byte, k int) (a, b, c uint32)
TEXT ·copyTriple(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	XORL CX, CX
	XORL DX, DX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ k+24(FP), BX
	LEAQ (BX)(BX*1), R12
	MOVQ BX, R11 // bytes left in each stretch

triple:
	STEP(0)
	STEP(8)
	STEP(16)
	STEP(24)
	STEP(32)
	STEP(40)
	STEP(48)
	STEP(56)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, R11
	JNZ  triple

	MOVL AX, a+32(FP)
	MOVL CX, b+36(FP)
	MOVL DX, c+40(FP)
	RET

// func copySingle(crc uint32, dst, src *byte, n int) uint32
TEXT ·copySingle(SB), NOSPLIT, $0-36
	MOVL crc+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX

words:
	CMPQ CX, $8
	JB   tail
	MOVQ (SI), R8
	MOVQ R8, (DI)
	CRC32Q R8, AX
	ADDQ $8, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JMP  words

tail:
	BTQ  $2, CX
	JNC  two
	MOVL (SI), R8
	MOVL R8, (DI)
	CRC32L R8, AX
	ADDQ $4, SI
	ADDQ $4, DI

two:
	BTQ  $1, CX
	JNC  one
	MOVW (SI), R8
	MOVW R8, (DI)
	CRC32W R8, AX
	ADDQ $2, SI
	ADDQ $2, DI

one:
	BTQ  $0, CX
	JNC  done
	MOVB (SI), R8
	MOVB R8, (DI)
	CRC32B R8, AX

done:
	MOVL AX, ret+32(FP)
	RET
