// RUN: attn-opt %s --split-input-file --attn-print-block-map="block-m=128 block-n=128" -o /dev/null | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-print-block-map="block-m=16 block-n=8" -o /dev/null | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s --split-input-file --attn-print-block-map -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTILE
// RUN: not attn-opt %s --split-input-file --attn-print-block-map="block-m=16 block-n=9223372036854775807" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE

// The K/V blocks each Q block visits, and which of them need no mask, as
// attn-causal-split builds them (folded).

// Mistral-7B's sliding window of 4096 keys at N = 32768 (left = 4095,
// right = 0): Q block qb visits blocks [qb - 32, qb + 1), of which
// [qb - 31, qb) are full, from qb = 32 on; 33 of 256 blocks per Q block,
// so the work grows with N x window, not N^2.
// CHECK-LABEL: block map of attn.attention {{.*}}: Nq 32768, Nk 32768, BLOCK_M 128, BLOCK_N 128, #attn.key_mask<left = 4095, right = 0>
//  CHECK-NEXT: q_block 0: visit [0, 1) full [0, 0)
//  CHECK-NEXT: q_block 1: visit [0, 2) full [0, 1)
//       CHECK: q_block 31: visit [0, 32) full [0, 31)
//  CHECK-NEXT: q_block 32: visit [0, 33) full [1, 32)
//  CHECK-NEXT: q_block 33: visit [1, 34) full [2, 33)
//       CHECK: q_block 100: visit [68, 101) full [69, 100)
//       CHECK: q_block 255: visit [223, 256) full [224, 255)
//  CHECK-NEXT: visited 7920 of 65536 block pairs, 480 masked
// Dense causal: Q block qb visits [0, qb + 1).
// SMALL-LABEL: block map of attn.attention
func.func @mistral(%q: memref<1x32x32768x128xbf16>, %k: memref<1x8x32768x128xbf16>,
                   %v: memref<1x8x32768x128xbf16>, %o: memref<1x32x32768x128xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x32x32768x128xbf16>,
      memref<1x8x32768x128xbf16>, memref<1x8x32768x128xbf16>)
      outs(%o : memref<1x32x32768x128xbf16>)
      {causal, key_mask = #attn.key_mask<left = 4095>}
  return
}

// -----

// Causal alone is the window (-1, 0): Q block qb of 16 rows visits
// [0, 2 qb + 2) and needs no mask on [0, 2 qb).
// SMALL-LABEL: block map of attn.attention {{.*}}: Nq 64, Nk 64, BLOCK_M 16, BLOCK_N 8, #attn.key_mask<right = 0>
//  SMALL-NEXT: q_block 0: visit [0, 2) full [0, 0)
//  SMALL-NEXT: q_block 1: visit [0, 4) full [0, 2)
//  SMALL-NEXT: q_block 2: visit [0, 6) full [0, 4)
//  SMALL-NEXT: q_block 3: visit [0, 8) full [0, 6)
//  SMALL-NEXT: visited 20 of 32 block pairs, 8 masked
func.func @causal(%q: memref<1x1x64x16xf16>, %o: memref<1x1x64x16xf16>) {
  attn.attention ins(%q, %q, %q : memref<1x1x64x16xf16>, memref<1x1x64x16xf16>,
      memref<1x1x64x16xf16>) outs(%o : memref<1x1x64x16xf16>) {causal}
  return
}

// -----

// Window (40, 0): row p sees [p - 40, p]. Q block 3 (rows 48..63) sees
// none of block 0 (keys 0..7), part of blocks 1, 2 (row 63 starts at 23),
// all of blocks 3..5 and part of 6, 7 (the diagonal).
// SMALL-LABEL: block map of attn.attention {{.*}} #attn.key_mask<left = 40, right = 0>
//  SMALL-NEXT: q_block 0: visit [0, 2) full [0, 0)
//  SMALL-NEXT: q_block 1: visit [0, 4) full [0, 2)
//  SMALL-NEXT: q_block 2: visit [0, 6) full [1, 4)
//  SMALL-NEXT: q_block 3: visit [1, 8) full [3, 6)
//  SMALL-NEXT: visited 19 of 32 block pairs, 11 masked
func.func @window(%q: memref<1x1x64x16xf16>, %o: memref<1x1x64x16xf16>) {
  attn.attention ins(%q, %q, %q : memref<1x1x64x16xf16>, memref<1x1x64x16xf16>,
      memref<1x1x64x16xf16>) outs(%o : memref<1x1x64x16xf16>)
      {key_mask = #attn.key_mask<left = 40, right = 0>}
  return
}

// -----

// Chunked causal (chunk 24) with Nq = 32 > Nk = 24: offset -8, so rows
// 0..7 (p < 0) see no key and rows 8..31 see [0, p] inside chunk 0.
// Q block 0 (p = -8..7) visits [0, 1); Q block 1 (p = 8..23): [0, 3).
// SMALL-LABEL: block map of attn.attention {{.*}}: Nq 32, Nk 24, {{.*}} #attn.key_mask<right = 0, chunk = 24>
//  SMALL-NEXT: q_block 0: visit [0, 1) full [0, 0)
//  SMALL-NEXT: q_block 1: visit [0, 3) full [0, 1)
func.func @chunk_nq_gt_nk(%q: memref<1x1x32x16xf16>, %k: memref<1x1x24x16xf16>,
                          %o: memref<1x1x32x16xf16>) {
  attn.attention ins(%q, %k, %k : memref<1x1x32x16xf16>, memref<1x1x24x16xf16>,
      memref<1x1x24x16xf16>) outs(%o : memref<1x1x32x16xf16>)
      {causal, key_mask = #attn.key_mask<chunk = 24>}
  return
}

// -----

// Prefix-LM (prefix 20, causal after): row p sees [0, max(p + 1, 20)).
// Q block 0 (rows 0..15) visits the blocks below key 20, [0, 3), and
// blocks 0 and 1 (keys 0..15) need no mask: every row sees keys 0..19.
// SMALL-LABEL: block map of attn.attention {{.*}} #attn.key_mask<right = 0, prefix = 20>
//  SMALL-NEXT: q_block 0: visit [0, 3) full [0, 2)
//  SMALL-NEXT: q_block 1: visit [0, 4) full [0, 2)
//  SMALL-NEXT: q_block 2: visit [0, 6) full [0, 4)
func.func @prefix(%q: memref<1x1x64x16xf16>, %o: memref<1x1x64x16xf16>) {
  attn.attention ins(%q, %q, %q : memref<1x1x64x16xf16>, memref<1x1x64x16xf16>,
      memref<1x1x64x16xf16>) outs(%o : memref<1x1x64x16xf16>)
      {causal, key_mask = #attn.key_mask<prefix = 20>}
  return
}

// NOTILE: attn-print-block-map needs block-m in [1, 1024] and block-n in [1, 256], but got 0 and 0
// HUGE: attn-print-block-map needs block-m in [1, 1024] and block-n in [1, 256], but got 16 and 9223372036854775807
