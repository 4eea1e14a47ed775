#include "textflag.h"

// FOLD(k, acc, data): acc = acc.lo*k.lo ^ acc.hi*k.hi ^ data, carry-less,
// in each 128-bit lane; Z15 is scratch.
#define FOLD(k, acc, data) \
	VPCLMULQDQ $0x00, k, acc, Z15; \
	VPCLMULQDQ $0x11, k, acc, acc; \
	VPTERNLOGD $0x96, Z15, data, acc

// CRC32Q of both quadwords of an X register into AX.
#define CRCX(x) \
	VMOVQ   x, R8; \
	CRC32Q  R8, AX; \
	VPEXTRQ $1, x, R8; \
	CRC32Q  R8, AX

// func copyFold(crc uint32, dst, src *byte, n int, k *foldKeys) uint32
//
// Four ZMM accumulators take 256 bytes an iteration: each 64-byte load is
// stored to dst and folded into its accumulator, 2048 bits on. At the end
// the accumulators fold into one (512 bits apart), and the CRC of those 64
// bytes, by the CRC32 instruction from 0, is the CRC of all n.
TEXT ·copyFold(SB), NOSPLIT, $0-44
	MOVL crc+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVQ k+32(FP), DX

	VMOVDQU64 (SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z3
	VMOVDQU64 Z0, (DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	VMOVD     AX, X4 // zeroes the rest of Z4
	VPXORQ    Z4, Z0, Z0 // the CRC so far enters XORed into the first 4 bytes
	ADDQ      $256, SI
	ADDQ      $256, DI
	SUBQ      $256, CX
	JZ        reduce

	VBROADCASTI32X4 (DX), Z8 // 2048 bits on

	PCALIGN $32
loop:
	VMOVDQU64 (SI), Z4
	VMOVDQU64 64(SI), Z5
	VMOVDQU64 128(SI), Z6
	VMOVDQU64 192(SI), Z7
	VMOVDQU64 Z4, (DI)
	VMOVDQU64 Z5, 64(DI)
	VMOVDQU64 Z6, 128(DI)
	VMOVDQU64 Z7, 192(DI)
	FOLD(Z8, Z0, Z4)
	FOLD(Z8, Z1, Z5)
	FOLD(Z8, Z2, Z6)
	FOLD(Z8, Z3, Z7)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JNZ  loop

reduce:
	VBROADCASTI32X4 16(DX), Z8 // 512 bits on
	FOLD(Z8, Z0, Z1)
	FOLD(Z8, Z0, Z2)
	FOLD(Z8, Z0, Z3)
	XORL AX, AX
	CRCX(X0)
	VEXTRACTI32X4 $1, Z0, X4
	CRCX(X4)
	VEXTRACTI32X4 $2, Z0, X4
	CRCX(X4)
	VEXTRACTI32X4 $3, Z0, X4
	CRCX(X4)
	VZEROUPPER
	MOVL AX, ret+40(FP)
	RET
