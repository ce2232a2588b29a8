// A varlen attention beside a dense one (bundle-varlen.test): its static
// cu_seqlens (B + 1 = 5) and identity layouts have no bundle form.
func.func @dense(%q: memref<1x4x64x64xbf16>, %k: memref<1x4x64x64xbf16>,
                 %v: memref<1x4x64x64xbf16>, %o: memref<1x4x64x64xbf16>) {
  attn.attention ins(%q, %k, %v : memref<1x4x64x64xbf16>,
                     memref<1x4x64x64xbf16>, memref<1x4x64x64xbf16>)
      outs(%o : memref<1x4x64x64xbf16>)
  return
}

func.func @varlen(%q: memref<?x32x128xbf16>, %k: memref<?x8x128xbf16>,
                  %v: memref<?x8x128xbf16>, %cu_q: memref<5xi32>,
                  %cu_k: memref<5xi32>, %max_q: index, %max_k: index,
                  %o: memref<?x32x128xbf16>) {
  attn.varlen_attention ins(%q, %k, %v : memref<?x32x128xbf16>,
                            memref<?x8x128xbf16>, memref<?x8x128xbf16>)
                        seqlens(%cu_q, %cu_k : memref<5xi32>, memref<5xi32>)
                        max(%max_q, %max_k)
                        outs(%o : memref<?x32x128xbf16>)
  return
}
