//===- QuantizeGrids.cpp - the FP8 quantize step's launches ---------------===//
//
// QuantizeGrids.h's definitions: the amax grid's programs (per-block CTAs
// that also write the copy, partial maxima for the other groups), the
// row-major and V^T copy grids, and the rotated per-block grid
// (RotatedBlockCta), with the helpers only they use.
//
//===----------------------------------------------------------------------===//

#include "QuantizeGrids.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace mlir::attn::quantize {

/// Elements each amax thread should at least get before a group is cut
/// across more CTAs (at most kMaxAmaxCtas).
constexpr int64_t kAmaxPerThread = 64;
constexpr int64_t kMaxAmaxCtas = 128;

//===----------------------------------------------------------------------===//
// The first launch: every amax
//===----------------------------------------------------------------------===//

/// Builds `body` for the program that CTA `id` of a grid of consecutive
/// programs (`ctas` CTAs each, from `first` on, starting at CTA `start`)
/// belongs to, given the CTA's index in that program: a chain of scf.if.
static void
dispatch(ImplicitLocOpBuilder &b, Value id, ArrayRef<int64_t> ctas,
         function_ref<void(ImplicitLocOpBuilder &, size_t, Value)> body,
         size_t first = 0, int64_t start = 0) {
  Value cta = start ? arith::SubIOp::create(b, id, index(b, start)) : id;
  if (first + 1 == ctas.size())
    return body(b, first, cta);
  int64_t end = start + ctas[first];
  auto ifOp = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, id, index(b, end)),
      /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body(b, first, cta);
  b.setInsertionPointToStart(ifOp.elseBlock());
  dispatch(b, id, ctas, body, first + 1, end);
}

void buildAmaxLaunch(ImplicitLocOpBuilder &b, ArrayRef<AmaxProgram> programs) {
  SmallVector<int64_t> ctas = llvm::map_to_vector(
      programs, [](const AmaxProgram &p) { return p.ctas; });
  int64_t total = std::accumulate(ctas.begin(), ctas.end(), int64_t{0});
  buildCtaGrid(b, {total}, [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
    Value part = workgroupBuffer(cb, kBlockThreads);
    buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      dispatch(tb, ids[0], ctas,
               [&](ImplicitLocOpBuilder &pb, size_t i, Value cta) {
                 memref::StoreOp::create(pb, programs[i].partial(pb, cta, t),
                                         part, t);
               });
    });
    buildMaxTree(cb, part);
    buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      Value amax = memref::LoadOp::create(tb, part, ValueRange{index(tb, 0)});
      dispatch(tb, ids[0], ctas,
               [&](ImplicitLocOpBuilder &pb, size_t i, Value cta) {
                 programs[i].finish(pb, cta, t, amax);
               });
    });
  });
}

namespace {

/// Where a per-block CTA works: the block `blk` of rows [n0, n1) of head h
/// of batch bb.
struct RowBlock {
  Value blk, h, bb, n0, n1;
};

} // namespace

AmaxProgram blockProgram(Value fp8, Value descale, int64_t block,
                         RowValue value) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], w = kChunk, cols = shape[3] / w;
  // A block longer than N is one block of N rows (whole when it has them).
  int64_t wholeRows = std::min(block, n);
  // Row blocks fastest: consecutive CTAs read consecutive rows.
  SmallVector<int64_t> grid = {
      static_cast<int64_t>(llvm::divideCeil(n, block)), shape[1], shape[0]};
  auto rowsOf = [=](ImplicitLocOpBuilder &b, Value cta) {
    SmallVector<Value> idx = delinearize(b, cta, grid);
    auto [n0, n1] = blockRows(b, idx[0], block, n);
    return RowBlock{idx[0], idx[1], idx[2], n0, n1};
  };
  AmaxProgram p;
  p.ctas = grid[0] * grid[1] * grid[2];
  p.partial = [=](ImplicitLocOpBuilder &b, Value cta, Value t) {
    RowBlock rb = rowsOf(b, cta);
    SmallVector<Value> amax;
    auto load = [&](ImplicitLocOpBuilder &lb, Value row, Value j) {
      return value.loadChunk(lb, {rb.bb, rb.h, row}, j, w);
    };
    forEachChunk(
        b, t, rb.n0, rb.n1, cols, w, ValueRange{f32(b, 0.0)}, load,
        [&](ImplicitLocOpBuilder &lb, Value row, Value j, ValueRange loaded,
            ValueRange acc) -> SmallVector<Value> {
          Value m = acc[0];
          for (Value x : value.extendChunk(lb, loaded))
            m = arith::MaximumFOp::create(lb, m, math::AbsFOp::create(lb, x));
          return {m};
        },
        &amax, wholeRows);
    return amax[0];
  };
  p.finish = [=](ImplicitLocOpBuilder &b, Value cta, Value t, Value amax) {
    RowBlock rb = rowsOf(b, cta);
    auto f8 = b.getType<Float8E4M3FNType>();
    Value scale = descaleOf(b, amax);
    storeIf(b, isZero(b, t), scale, descale, ValueRange{rb.bb, rb.h, rb.blk});
    withSharedDivisor(b, scale, [&](ImplicitLocOpBuilder &db,
                                    const SharedDivisor &div) {
      forEachChunk(
          db, t, rb.n0, rb.n1, cols, w, ValueRange{},
          [&](ImplicitLocOpBuilder &lb, Value row, Value j) {
            return value.loadChunk(lb, {rb.bb, rb.h, row}, j, w);
          },
          [&](ImplicitLocOpBuilder &lb, Value row, Value j, ValueRange loaded,
              ValueRange) -> SmallVector<Value> {
            SmallVector<Value> q;
            for (Value x : value.extendChunk(lb, loaded))
              q.push_back(arith::TruncFOp::create(lb, f8, div.divide(lb, x)));
            // w bytes at a multiple of w: aligned.
            vector::StoreOp::create(
                lb,
                vector::FromElementsOp::create(lb, VectorType::get({w}, f8),
                                               q),
                fp8, ValueRange{rb.bb, rb.h, row, j})
                ->setAttr("alignment", lb.getI64IntegerAttr(w));
            return {};
          },
          /*results=*/nullptr, wholeRows);
    });
  };
  return p;
}

int64_t amaxCtasPerGroup(const Groups &groups) {
  return std::clamp<int64_t>(
      llvm::divideCeil(groups.elements, kBlockThreads * kAmaxPerThread), 1,
      kMaxAmaxCtas);
}

AmaxProgram partialAmaxProgram(Value partials, Groups groups, RowValue value,
                               int64_t ctas) {
  SmallVector<int64_t> grid = {ctas};
  llvm::append_range(grid, groups.shape);
  int64_t w = groups.wholeRows ? kChunk : 1;
  AmaxProgram p;
  p.ctas = 1;
  for (int64_t extent : grid)
    p.ctas *= extent;
  p.partial = [=](ImplicitLocOpBuilder &b, Value cta, Value t) {
    SmallVector<Value> idx = delinearize(b, cta, grid);
    Box box = groups.box(b, ArrayRef(idx).drop_front());
    if (w > 1) // whole rows: D / w chunks per row
      box.hi[3] = index(b, value.rowLength() / w);
    Value size = index(b, 1);
    for (int i = 0; i < 4; ++i)
      size = arith::MulIOp::create(
          b, size, arith::SubIOp::create(b, box.hi[i], box.lo[i]));
    Value first = arith::AddIOp::create(
        b, arith::MulIOp::create(b, idx[0], index(b, kBlockThreads)), t);
    auto loop = scf::ForOp::create(b, first, size,
                                   index(b, ctas * kBlockThreads),
                                   ValueRange{f32(b, 0.0)});
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> bhnj = boxElement(b, box, loop.getInductionVar());
    ValueRange bhn = ArrayRef(bhnj).take_front(3);
    SmallVector<Value> ys =
        w > 1 ? value.buildChunk(
                    b, bhn, arith::MulIOp::create(b, bhnj[3], index(b, w)), w)
              : SmallVector<Value>{value.build(b, bhn, bhnj[3])};
    Value m = loop.getRegionIterArgs()[0];
    for (Value y : ys)
      m = arith::MaximumFOp::create(b, m, math::AbsFOp::create(b, y));
    scf::YieldOp::create(b, ValueRange{m});
    b.setInsertionPointAfter(loop);
    return loop.getResult(0);
  };
  p.finish = [=](ImplicitLocOpBuilder &b, Value cta, Value t, Value amax) {
    SmallVector<Value> idx = delinearize(b, cta, grid);
    SmallVector<Value> at(ArrayRef<Value>(idx).drop_front());
    at.push_back(idx[0]);
    storeIf(b, isZero(b, t), amax, partials, at);
  };
  return p;
}

//===----------------------------------------------------------------------===//
// The second launch: copies of operands whose groups are not blocks
//===----------------------------------------------------------------------===//

/// Rows of a row-major FP8 copy per quantize CTA.
constexpr int64_t kQuantizeRows = 16;

void buildQuantizeGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                       Value partials, const Groups &groups,
                       const RowValue &value, int64_t ctasPerGroup) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], d = shape[3];
  int64_t headsPerEntry = shape[1] / groups.descaleShape[1];
  auto f8 = b.getType<Float8E4M3FNType>();
  buildCtaGrid(
      b,
      {shape[0], shape[1],
       static_cast<int64_t>(llvm::divideCeil(n, kQuantizeRows))},
      [&](ImplicitLocOpBuilder &cb, ValueRange bhc) {
        Value scales = workgroupBuffer(cb, 1);
        Value first =
            arith::MulIOp::create(cb, bhc[2], index(cb, kQuantizeRows));
        Value last = arith::MinUIOp::create(
            cb, arith::AddIOp::create(cb, first, index(cb, kQuantizeRows)),
            index(cb, n));
        buildThreadLoop(cb, 1, [&](ImplicitLocOpBuilder &tb, Value) {
          SmallVector<Value> entry =
              groups.entry(tb, ValueRange{bhc[0], bhc[1], first, index(tb, 0)});
          Value scale = descaleOfGroup(tb, partials, groups.group(tb, entry),
                                       ctasPerGroup);
          memref::StoreOp::create(tb, scale, scales, ValueRange{index(tb, 0)});
          Value writer = arith::AndIOp::create(
              tb, isZero(tb, bhc[2]),
              isZero(tb, arith::RemUIOp::create(tb, bhc[1],
                                                index(tb, headsPerEntry))));
          storeIf(tb, writer, scale, descale, entry);
        });
        buildThreadLoop(cb, d, [&](ImplicitLocOpBuilder &tb, Value t) {
          Value scale =
              memref::LoadOp::create(tb, scales, ValueRange{index(tb, 0)});
          withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                           const SharedDivisor &div) {
            scf::buildLoopNest(
                db, db.getLoc(), first, last, index(db, 1),
                [&](OpBuilder &nb, Location loc, ValueRange iv) {
                  ImplicitLocOpBuilder eb(loc, nb);
                  Value y = value.build(
                      eb, ValueRange{bhc[0], bhc[1], iv[0]}, t);
                  memref::StoreOp::create(
                      eb, arith::TruncFOp::create(eb, f8, div.divide(eb, y)),
                      fp8, ValueRange{bhc[0], bhc[1], iv[0], t});
                });
          });
        });
      });
}

/// Keys of V per V^T quantize CTA: a row of V^T's tile is 128 bytes.
constexpr int64_t kTransposeKeys = 128;
/// e4m3 bytes a thread stores at once (16: TMA's row alignment).
constexpr int64_t kStoreBytes = 16;

namespace {

/// Where a V^T quantize CTA works: its batch, head and first key, the
/// keys N (rows of V) and V^T's row length (N padded to 16).
struct KeyBlock {
  Value b, h, n0;
  int64_t n, padded;
};

} // namespace

/// Item c of a V^T quantize CTA's phase 1: key c % 128 of the CTA, the
/// 8 columns from j = 8 (c / 128).
static std::pair<Value, Value> tileItem(ImplicitLocOpBuilder &b, Value c) {
  return {arith::RemUIOp::create(b, c, index(b, kTransposeKeys)),
          arith::MulIOp::create(
              b, arith::DivUIOp::create(b, c, index(b, kTransposeKeys)),
              index(b, kChunk))};
}

/// truncf(x / descale) of columns j .. j + 7 of a row (`xs`, f32), as one
/// e4m3 vector. `shared`: the CTA's one descale; else column j's is
/// scales[j] (per channel).
static Value quantizeColumns(ImplicitLocOpBuilder &b, ValueRange xs, Value j,
                             Value scales, const SharedDivisor *shared) {
  auto f8 = b.getType<Float8E4M3FNType>();
  SmallVector<Value> q;
  for (auto [k, x] : llvm::enumerate(xs)) {
    Value y =
        shared ? shared->divide(b, x)
               : arith::DivFOp::create(
                     b, x,
                     memref::LoadOp::create(
                         b, scales,
                         ValueRange{arith::AddIOp::create(b, j, index(b, k))}));
    q.push_back(arith::TruncFOp::create(b, f8, y));
  }
  return vector::FromElementsOp::create(
      b, VectorType::get({kChunk}, f8), q);
}

/// tile[j + k][key] = q[k]: one key's 8 columns, down a column of the tile.
static void storeTileColumn(ImplicitLocOpBuilder &b, Value tile, Value key,
                            Value j, Value q) {
  for (int64_t k = 0; k < kChunk; ++k)
    memref::StoreOp::create(
        b, vector::ExtractOp::create(b, q, k), tile,
        ValueRange{arith::AddIOp::create(b, j, index(b, k)), key});
}

/// Phase 1 of a V^T quantize CTA, item c (tileItem): tile[j + k][key] =
/// truncf(v / descale), 0 for keys past N.
static void quantizeIntoTile(ImplicitLocOpBuilder &b, const KeyBlock &kb,
                             Value c, Value tile, Value scales,
                             const RowValue &value,
                             const SharedDivisor *shared) {
  auto chunkType = VectorType::get({kChunk}, b.getType<Float8E4M3FNType>());
  auto [key, j] = tileItem(b, c);
  Value row = arith::AddIOp::create(b, kb.n0, key);
  Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row,
                                       index(b, kb.n));
  auto ifOp = scf::IfOp::create(b, TypeRange(chunkType), inside,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(
        b, quantizeColumns(b, value.buildChunk(b, {kb.b, kb.h, row}, j, kChunk),
                           j, scales, shared));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, ValueRange{arith::ConstantOp::create(
               b, DenseElementsAttr::get(
                      chunkType, b.getFloatAttr(chunkType.getElementType(),
                                                0.0)))});
  }
  storeTileColumn(b, tile, key, j, ifOp.getResult(0));
}

/// Phase 1 of a V^T quantize CTA over its `items` (thread t's are t, t +
/// kBlockThreads, ..): a CTA of 128 keys below N takes its items
/// straight-line, every row load first, so that they are in flight
/// together (the tile's stores would otherwise wait for each load in
/// turn); the last CTA, past N, takes the guarded loop.
static void quantizeTile(ImplicitLocOpBuilder &b, const KeyBlock &kb, Value t,
                         int64_t items, Value tile, Value scales,
                         const RowValue &value, const SharedDivisor *shared) {
  auto guarded = [&](ImplicitLocOpBuilder &lb) {
    forEachItem(lb, t, items, [&](ImplicitLocOpBuilder &eb, Value c) {
      quantizeIntoTile(eb, kb, c, tile, scales, value, shared);
    });
  };
  int64_t trips = items / kBlockThreads;
  if (items % kBlockThreads != 0 || trips > kMaxUnrolledChunks)
    return guarded(b);
  Value whole = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ule,
      arith::AddIOp::create(b, kb.n0, index(b, kTransposeKeys)),
      index(b, kb.n));
  auto ifOp = scf::IfOp::create(b, whole, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  SmallVector<std::pair<Value, Value>> where;
  SmallVector<SmallVector<Value>> loaded;
  for (int64_t i = 0; i < trips; ++i) {
    where.push_back(tileItem(
        b, i ? arith::AddIOp::create(b, t, index(b, i * kBlockThreads)) : t));
    auto [key, j] = where.back();
    loaded.push_back(value.loadChunk(
        b, {kb.b, kb.h, arith::AddIOp::create(b, kb.n0, key)}, j, kChunk));
  }
  for (int64_t i = 0; i < trips; ++i) {
    auto [key, j] = where[i];
    storeTileColumn(b, tile, key, j,
                    quantizeColumns(b, value.extendChunk(b, loaded[i]), j,
                                    scales, shared));
  }
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  guarded(b);
}

/// Phase 2 of a V^T quantize CTA, item c: 16 bytes of tile row
/// j = c / 8 to V^T's row j at key n0 + 16 (c % 8), if below its padded
/// length.
static void copyTileRow(ImplicitLocOpBuilder &b, const KeyBlock &kb, Value c,
                        Value tile, Value storage) {
  int64_t units = kTransposeKeys / kStoreBytes;
  Value j = arith::DivUIOp::create(b, c, index(b, units));
  Value at = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, c, index(b, units)), index(b, kStoreBytes));
  Value col = arith::AddIOp::create(b, kb.n0, at);
  auto ifOp = scf::IfOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                            index(b, kb.padded)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto bytes = VectorType::get({kStoreBytes}, b.getType<Float8E4M3FNType>());
  auto load = vector::LoadOp::create(b, bytes, tile, ValueRange{j, at});
  load->setAttr("alignment", b.getI64IntegerAttr(kStoreBytes));
  vector::StoreOp::create(b, load, storage, ValueRange{kb.b, kb.h, j, col})
      ->setAttr("alignment", b.getI64IntegerAttr(kStoreBytes));
}

void buildTransposedQuantizeGrid(ImplicitLocOpBuilder &b, Value storage,
                                 Value descale, Value partials,
                                 const Groups &groups, const RowValue &value,
                                 int64_t n, int64_t ctasPerGroup) {
  ArrayRef<int64_t> shape = cast<MemRefType>(storage.getType()).getShape();
  int64_t d = shape[2];
  auto tileType = MemRefType::get(
      {d, kTransposeKeys}, b.getType<Float8E4M3FNType>(),
      MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  buildCtaGrid(
      b,
      {static_cast<int64_t>(llvm::divideCeil(n, kTransposeKeys)), shape[1],
       shape[0]},
      [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
        // 16-byte aligned: phase 2 moves 16-byte vectors (on the host too).
        Value tile = memref::AllocaOp::create(
            cb, tileType, cb.getI64IntegerAttr(kStoreBytes));
        KeyBlock kb{
            ids[2], ids[1],
            arith::MulIOp::create(cb, ids[0], index(cb, kTransposeKeys)), n,
            shape[3]};
        // V per head: one descale for the CTA's keys; per channel: D.
        bool oneScale = groups.wholeRows;
        Value scales = workgroupBuffer(cb, oneScale ? 1 : d);
        buildThreadLoop(cb, oneScale ? 1 : d, [&](ImplicitLocOpBuilder &tb,
                                                  Value t) {
          SmallVector<Value> entry = groups.entry(
              tb, ValueRange{kb.b, kb.h, kb.n0, oneScale ? index(tb, 0) : t});
          Value scale = descaleOfGroup(tb, partials, groups.group(tb, entry),
                                       ctasPerGroup);
          memref::StoreOp::create(tb, scale, scales, t);
          storeIf(tb, isZero(tb, ids[0]), scale, descale, entry);
        });
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          auto items = [&](ImplicitLocOpBuilder &ib,
                           const SharedDivisor *shared) {
            quantizeTile(ib, kb, t, kTransposeKeys * (d / kChunk), tile,
                         scales, value, shared);
          };
          if (!oneScale)
            return items(tb, nullptr);
          Value scale =
              memref::LoadOp::create(tb, scales, ValueRange{index(tb, 0)});
          withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                           const SharedDivisor &div) {
            items(db, &div);
          });
        });
        buildThreadLoop(cb, kBlockThreads, [&](ImplicitLocOpBuilder &tb,
                                               Value t) {
          forEachItem(tb, t, d * (kTransposeKeys / kStoreBytes),
                      [&](ImplicitLocOpBuilder &ib, Value c) {
                        copyTileRow(ib, kb, c, tile, storage);
                      });
        });
      });
}

/// f32 elements of a rotated block staged in shared memory at once (32 KB;
/// a kernel's static shared memory is at most 48 KB).
constexpr int64_t kRotateTileFloats = 8192;

namespace {

/// One CTA of buildRotatedBlockGrid: rows [n0, n1) of head h of batch bb
/// (scale block `blk`), staged `rows` at a time in the f32 workgroup tile
/// [rows * D], with `part` for the CTA's max. Each method builds thread
/// loops of the CTA (barriers between them on the GPU).
class RotatedBlockCta {
public:
  RotatedBlockCta(ImplicitLocOpBuilder &b, ValueRange ids, int64_t n,
                  int64_t d, int64_t block, int64_t rows, RowValue value)
      : b(b), blk(ids[0]), h(ids[1]), bb(ids[2]), d(d), rows(rows),
        value(value), plain(value.source(), d, /*rotate=*/false) {
    tile = workgroupBuffer(b, rows * d);
    part = workgroupBuffer(b, kBlockThreads);
    std::tie(n0, n1) = blockRows(b, blk, block, n);
  }

  /// Rows [r0, r0 + rows) of the block, r0 = n0 + batch * rows, into the
  /// tile as H S x (rows past n1: zeros); returns r0.
  Value rotateBatch(int64_t batch) {
    Value r0 = arith::AddIOp::create(b, n0, index(b, batch * rows));
    buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      forEachItem(
          tb, t, rows * (d / kChunk),
          [&](ImplicitLocOpBuilder &ib, Value c) { loadChunk(ib, r0, c); });
    });
    for (int64_t span = kChunk; span < d; span *= 2)
      buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
        forEachItem(
            tb, t, rows * d / 2,
            [&](ImplicitLocOpBuilder &ib, Value p) { butterfly(ib, p, span); });
      });
    return r0;
  }

  /// part[t] = max(part[t] (after the first batch), |tile| / sqrt(D) over
  /// thread t's elements).
  void maxOfBatch(int64_t batch) {
    buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      Value m =
          batch ? Value(memref::LoadOp::create(tb, part, t)) : f32(tb, 0.0);
      auto loop = scf::ForOp::create(tb, t, index(tb, rows * d),
                                     index(tb, kBlockThreads), ValueRange{m});
      {
        OpBuilder::InsertionGuard guard(tb);
        tb.setInsertionPointToStart(loop.getBody());
        Value x = element(tb, loop.getInductionVar());
        scf::YieldOp::create(tb, ValueRange{arith::MaximumFOp::create(
                                     tb, loop.getRegionIterArgs()[0],
                                     math::AbsFOp::create(tb, x))});
      }
      memref::StoreOp::create(tb, loop.getResult(0), part, t);
    });
  }

  /// The batch at r0 quantized by descale = part[0] / 448 (1 for 0) into
  /// `fp8` in 8-byte stores; with `storeDescale`, thread 0 stores it.
  void copyBatch(Value r0, Value fp8, Value descale, bool storeDescale) {
    buildThreadLoop(b, kBlockThreads, [&](ImplicitLocOpBuilder &tb, Value t) {
      Value scale = descaleOf(
          tb, memref::LoadOp::create(tb, part, ValueRange{index(tb, 0)}));
      if (storeDescale)
        storeIf(tb, isZero(tb, t), scale, descale, ValueRange{bb, h, blk});
      withSharedDivisor(tb, scale, [&](ImplicitLocOpBuilder &db,
                                       const SharedDivisor &div) {
        forEachItem(db, t, rows * (d / kChunk),
                    [&](ImplicitLocOpBuilder &ib, Value c) {
                      storeChunk(ib, r0, c, fp8, div);
                    });
      });
    });
  }

  Value maxBuffer() const { return part; }

private:
  /// Item c of a batch: its row in the tile and first column.
  std::pair<Value, Value> chunkOf(ImplicitLocOpBuilder &ib, Value c) const {
    int64_t chunks = d / kChunk;
    return {arith::DivUIOp::create(ib, c, index(ib, chunks)),
            arith::MulIOp::create(
                ib, arith::RemUIOp::create(ib, c, index(ib, chunks)),
                index(ib, kChunk))};
  }

  Value at(ImplicitLocOpBuilder &ib, Value row, Value col) const {
    return arith::AddIOp::create(
        ib, arith::MulIOp::create(ib, row, index(ib, d)), col);
  }

  /// Tile element e, scaled by 1 / sqrt(D).
  Value element(ImplicitLocOpBuilder &ib, Value e) const {
    return arith::MulFOp::create(
        ib, memref::LoadOp::create(ib, tile, ValueRange{e}),
        f32(ib, 1.0 / std::sqrt(double(d))));
  }

  /// 16 bytes of row r0 + row (zeros past n1) times the signs, with the
  /// butterflies over columns 1, 2 and 4 apart done in registers.
  void loadChunk(ImplicitLocOpBuilder &ib, Value r0, Value c) const {
    auto [row, j] = chunkOf(ib, c);
    auto chunkType = VectorType::get({kChunk}, ib.getF32Type());
    Value src = arith::AddIOp::create(ib, r0, row);
    auto ifOp = scf::IfOp::create(
        ib, TypeRange(chunkType),
        arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, src, n1),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(ib);
      ib.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> x;
      for (auto [k, v] :
           llvm::enumerate(plain.buildChunk(ib, {bb, h, src}, j, kChunk))) {
        Value col = arith::IndexCastOp::create(
            ib, ib.getI32Type(), arith::AddIOp::create(ib, j, index(ib, k)));
        x.push_back(arith::SelectOp::create(ib, value.negativeSign(ib, col),
                                            arith::NegFOp::create(ib, v), v));
      }
      for (int64_t span = 1; span < kChunk; span *= 2)
        for (int64_t k = 0; k < kChunk; ++k) {
          if (k & span)
            continue;
          Value sum = arith::AddFOp::create(ib, x[k], x[k + span]);
          x[k + span] = arith::SubFOp::create(ib, x[k], x[k + span]);
          x[k] = sum;
        }
      scf::YieldOp::create(
          ib, ValueRange{vector::FromElementsOp::create(ib, chunkType, x)});
      ib.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(ib,
                           ValueRange{arith::ConstantOp::create(
                               ib, DenseElementsAttr::get(chunkType, 0.0f))});
    }
    for (int64_t k = 0; k < kChunk; ++k)
      memref::StoreOp::create(
          ib, vector::ExtractOp::create(ib, ifOp.getResult(0), k), tile,
          ValueRange{at(ib, row, arith::AddIOp::create(ib, j, index(ib, k)))});
  }

  /// Pair p of a pass over columns `span` apart: column i of its row with
  /// bit `span` clear and i + span become (x + y, x - y).
  void butterfly(ImplicitLocOpBuilder &ib, Value p, int64_t span) const {
    Value row = arith::DivUIOp::create(ib, p, index(ib, d / 2));
    Value k = arith::RemUIOp::create(ib, p, index(ib, d / 2));
    Value col = arith::AddIOp::create(
        ib,
        arith::MulIOp::create(ib,
                              arith::DivUIOp::create(ib, k, index(ib, span)),
                              index(ib, 2 * span)),
        arith::RemUIOp::create(ib, k, index(ib, span)));
    Value i = at(ib, row, col);
    Value partner = arith::AddIOp::create(ib, i, index(ib, span));
    Value x = memref::LoadOp::create(ib, tile, ValueRange{i});
    Value y = memref::LoadOp::create(ib, tile, ValueRange{partner});
    memref::StoreOp::create(ib, arith::AddFOp::create(ib, x, y), tile,
                            ValueRange{i});
    memref::StoreOp::create(ib, arith::SubFOp::create(ib, x, y), tile,
                            ValueRange{partner});
  }

  /// Chunk c of the batch at r0 (if inside the block) as e4m3 into `fp8`.
  void storeChunk(ImplicitLocOpBuilder &ib, Value r0, Value c, Value fp8,
                  const SharedDivisor &div) const {
    auto [row, j] = chunkOf(ib, c);
    auto f8 = ib.getType<Float8E4M3FNType>();
    Value dst = arith::AddIOp::create(ib, r0, row);
    auto inside = scf::IfOp::create(
        ib, arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, dst, n1),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPointToStart(inside.thenBlock());
    SmallVector<Value> q;
    for (int64_t k = 0; k < kChunk; ++k) {
      Value e = at(ib, row, arith::AddIOp::create(ib, j, index(ib, k)));
      q.push_back(
          arith::TruncFOp::create(ib, f8, div.divide(ib, element(ib, e))));
    }
    vector::StoreOp::create(
        ib,
        vector::FromElementsOp::create(ib, VectorType::get({kChunk}, f8), q),
        fp8, ValueRange{bb, h, dst, j})
        ->setAttr("alignment", ib.getI64IntegerAttr(kChunk));
  }

  ImplicitLocOpBuilder &b;
  Value blk, h, bb, n0, n1, tile, part;
  int64_t d, rows;
  RowValue value, plain;
};

} // namespace

void buildRotatedBlockGrid(ImplicitLocOpBuilder &b, Value fp8, Value descale,
                           int64_t block, const RowValue &value) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fp8.getType()).getShape();
  int64_t n = shape[2], d = shape[3];
  // A block longer than N is one block of N rows: unroll for those only.
  int64_t longest = std::min(block, n);
  int64_t rows = std::clamp<int64_t>(kRotateTileFloats / d, 1, longest);
  int64_t batches = llvm::divideCeil(longest, rows);
  buildCtaGrid(b,
               {static_cast<int64_t>(llvm::divideCeil(n, block)), shape[1],
                shape[0]},
               [&](ImplicitLocOpBuilder &cb, ValueRange ids) {
                 RotatedBlockCta cta(cb, ids, n, d, block, rows, value);
                 for (int64_t batch = 0; batch < batches; ++batch) {
                   cta.rotateBatch(batch);
                   cta.maxOfBatch(batch);
                 }
                 buildMaxTree(cb, cta.maxBuffer());
                 for (int64_t batch = 0; batch < batches; ++batch)
                   cta.copyBatch(cta.rotateBatch(batch), fp8, descale,
                                 /*storeDescale=*/batch == 0);
               });
}

} // namespace mlir::attn::quantize
