// An attention inside nested regions (the fuzzer's nestRegions wraps ops in
// more): the passes find it there.
func.func @nested(%q: memref<1x2x6x16xf16>, %k: memref<1x2x6x16xf16>,
                  %v: memref<1x2x6x16xf16>, %o: memref<1x2x6x16xf16>) {
  scf.execute_region {
    scf.execute_region {
      attn.attention ins(%q, %k, %v : memref<1x2x6x16xf16>, memref<1x2x6x16xf16>,
                         memref<1x2x6x16xf16>) outs(%o : memref<1x2x6x16xf16>) {causal}
      scf.yield
    }
    scf.yield
  }
  return
}
