// RUN: attn-opt %s --split-input-file -verify-diagnostics

// The verifier of #attn.config (attn-select-config's choice): a tile every
// pass accepts and a schedule some lowering runs, one case per message.

// expected-error @+1 {{block_m must be in [1, 1024] and block_n in [1, 256], but got 0 and 128}}
func.func @block_m() attributes {attn.config = #attn.config<block_m = 0, block_n = 128, stages = 0, consumer_warpgroups = 0, ping_pong = false, overlap = false>} {
  return
}

// -----

// expected-error @+1 {{block_m must be in [1, 1024] and block_n in [1, 256], but got 128 and 512}}
func.func @block_n() attributes {attn.config = #attn.config<block_m = 128, block_n = 512, stages = 3, consumer_warpgroups = 2, ping_pong = true, overlap = true>} {
  return
}

// -----

// expected-error @+1 {{the CUDA-core path (consumer_warpgroups = 0) has no ring: stages must be 0 and ping_pong, overlap false}}
func.func @cuda_core_ring() attributes {attn.config = #attn.config<block_m = 64, block_n = 16, stages = 2, consumer_warpgroups = 0, ping_pong = false, overlap = false>} {
  return
}

// -----

// expected-error @+1 {{consumer_warpgroups must be 1 to 3 of 64 rows each (block_m / 64), but got 2 for block_m 64}}
func.func @warpgroups() attributes {attn.config = #attn.config<block_m = 64, block_n = 128, stages = 3, consumer_warpgroups = 2, ping_pong = false, overlap = false>} {
  return
}

// -----

// expected-error @+1 {{consumer_warpgroups must be 1 to 3 of 64 rows each (block_m / 64), but got 4 for block_m 256}}
func.func @four_warpgroups() attributes {attn.config = #attn.config<block_m = 256, block_n = 64, stages = 3, consumer_warpgroups = 4, ping_pong = false, overlap = false>} {
  return
}

// -----

// expected-error @+1 {{a tensor-core ring needs at least 2 stages, but got 1}}
func.func @stages() attributes {attn.config = #attn.config<block_m = 128, block_n = 128, stages = 1, consumer_warpgroups = 2, ping_pong = false, overlap = false>} {
  return
}

// -----

// expected-error @+1 {{ping_pong needs two or more consumer warpgroups}}
func.func @ping_pong() attributes {attn.config = #attn.config<block_m = 64, block_n = 128, stages = 3, consumer_warpgroups = 1, ping_pong = true, overlap = false>} {
  return
}

// -----

// expected-error @+1 {{overlap needs 3 or more stages (a block holds its slot one iteration longer)}}
func.func @overlap() attributes {attn.config = #attn.config<block_m = 128, block_n = 128, stages = 2, consumer_warpgroups = 2, ping_pong = true, overlap = true>} {
  return
}
