// RUN: attn-opt %s --attn-select-config="block-m=128 block-n=256" -verify-diagnostics -o /dev/null

// attn-select-config: D 256 with BLOCK_N 256 on the tensor cores: Q (64
// KiB) and two stages of K and V (512 KiB) exceed shared memory.
func.func @shared_memory(%q: memref<1x2x512x256xbf16>, %o: memref<1x2x512x256xbf16>) {
  // expected-error @+1 {{attn-select-config: Q and two K/V stages need 589824 bytes of shared memory, more than the 232448 a CTA may use; use a smaller block-n}}
  attn.attention ins(%q, %q, %q : memref<1x2x512x256xbf16>, memref<1x2x512x256xbf16>,
                     memref<1x2x512x256xbf16>) outs(%o : memref<1x2x512x256xbf16>)
  return
}
