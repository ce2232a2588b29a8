//===- WarpgroupMMA.cpp - Hopper warpgroup-MMA building blocks ------------===//

#include "WarpgroupMMA.h"

#include "attn/Transforms/CtaAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace mlir::attn::wgmma {

Value cIndex(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}
Value cI32(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIntOp::create(b, v, 32);
}
Value cI64(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIntOp::create(b, v, 64);
}
Value cF32(ImplicitLocOpBuilder &b, double v) {
  return arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(float(v)));
}

Value opaque(ImplicitLocOpBuilder &b, Value x) {
  bool isIndex = x.getType().isIndex();
  if (isIndex)
    x = arith::IndexCastOp::create(b, b.getI64Type(), x);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, x.getType(), ValueRange{x}, "mov.b64 $0, $1;", "=l,l",
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  Value y = asmOp.getResult(0);
  return isIndex ? arith::IndexCastOp::create(b, b.getIndexType(), y) : y;
}

static Value approx(ImplicitLocOpBuilder &b, StringRef intrinsic, Value x) {
  return LLVM::CallIntrinsicOp::create(b, b.getF32Type(),
                                       b.getStringAttr(intrinsic), x)
      .getResult(0);
}
Value exp2(ImplicitLocOpBuilder &b, Value x) {
  return approx(b, "llvm.nvvm.ex2.approx.ftz.f", x);
}
Value log2(ImplicitLocOpBuilder &b, Value x) {
  return approx(b, "llvm.nvvm.lg2.approx.ftz.f", x);
}

SmallVector<Value> unpack(ImplicitLocOpBuilder &b, Value vec) {
  int64_t n = cast<VectorType>(vec.getType()).getNumElements();
  SmallVector<Value> elts;
  for (int64_t i = 0; i < n; ++i)
    elts.push_back(vector::ExtractOp::create(b, vec, i));
  return elts;
}

Value pack(ImplicitLocOpBuilder &b, ArrayRef<Value> elts) {
  auto type = VectorType::get({int64_t(elts.size())}, b.getF32Type());
  return vector::FromElementsOp::create(b, type, elts);
}

LLVM::LLVMStructType accStruct(MLIRContext *ctx, int64_t regs) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(regs, Float32Type::get(ctx)));
}

SmallVector<Value> unpackStruct(ImplicitLocOpBuilder &b, Value s,
                                int64_t regs) {
  SmallVector<Value> elts;
  for (int64_t i = 0; i < regs; ++i)
    elts.push_back(LLVM::ExtractValueOp::create(b, s, i));
  return elts;
}

//===----------------------------------------------------------------------===//
// Thread geometry
//===----------------------------------------------------------------------===//

ThreadLayout threadLayout(ImplicitLocOpBuilder &b) {
  ThreadLayout tl;
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value t = arith::SubIOp::create(b, tid, cIndex(b, 128)); // producer first
  tl.warpgroup = arith::DivUIOp::create(b, t, cIndex(b, 128));
  tl.thread = arith::RemUIOp::create(b, t, cIndex(b, 128));
  Value warp = arith::DivUIOp::create(b, tl.thread, cIndex(b, 32));
  Value lane = arith::RemUIOp::create(b, tl.thread, cIndex(b, 32));
  tl.g = arith::DivUIOp::create(b, lane, cIndex(b, 4));
  Value q = arith::RemUIOp::create(b, lane, cIndex(b, 4));
  tl.twoQ = arith::MulIOp::create(b, q, cIndex(b, 2));
  tl.quadLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, q, cIndex(b, 0));
  Value base = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, cIndex(b, 16)), tl.g);
  Value wgRow =
      arith::MulIOp::create(b, tl.warpgroup, cIndex(b, kWarpgroupRows));
  for (int h = 0; h < 2; ++h)
    tl.row[h] = arith::AddIOp::create(
        b, wgRow, arith::AddIOp::create(b, base, cIndex(b, 8 * h)));
  return tl;
}

//===----------------------------------------------------------------------===//
// Shared-memory matrix descriptors
//===----------------------------------------------------------------------===//

Value sharedAddress(ImplicitLocOpBuilder &b, Value tile) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, tile);
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, meta.getBaseBuffer());
  int64_t eltBytes =
      cast<MemRefType>(tile.getType()).getElementTypeBitWidth() / 8;
  Value offset =
      arith::MulIOp::create(b, meta.getOffset(), cIndex(b, eltBytes));
  return arith::IndexCastOp::create(b, b.getI64Type(),
                                    arith::AddIOp::create(b, base, offset));
}

void zeroRowsFrom(ImplicitLocOpBuilder &b, Value addr, int64_t chunks,
                  int64_t rows, Value from, const ThreadLayout &tl) {
  int64_t rowUnits = kChunkBytes / 16; // 16-byte stores per row
  auto unitType = VectorType::get({4}, b.getI32Type());
  Value zero = arith::ConstantOp::create(b, unitType, b.getZeroAttr(unitType));
  auto toI64 = [&](Value index) {
    return arith::IndexCastOp::create(b, b.getI64Type(), index);
  };
  // Thread t of 128 stores unit t % 8 of rows from + t / 8, + 16, ... of
  // each chunk.
  Value unit = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, tl.thread, cIndex(b, rowUnits)),
      cIndex(b, 16));
  Value first = arith::AddIOp::create(
      b, from, arith::DivUIOp::create(b, tl.thread, cIndex(b, rowUnits)));
  auto loop = scf::ForOp::create(b, first, cIndex(b, rows),
                                 cIndex(b, 128 / rowUnits));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value rowAddr = arith::AddIOp::create(
        b, addr,
        toI64(arith::AddIOp::create(
            b, arith::MulIOp::create(b, loop.getInductionVar(),
                                     cIndex(b, kChunkBytes)),
            unit)));
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
    for (int64_t c = 0; c < chunks; ++c) {
      Value at = arith::AddIOp::create(b, rowAddr,
                                       cI64(b, c * rows * kChunkBytes));
      LLVM::StoreOp::create(b, zero, LLVM::IntToPtrOp::create(b, ptrType, at),
                            /*alignment=*/16);
    }
  }
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value descriptor(ImplicitLocOpBuilder &b, Value addr, int64_t offset,
                 int64_t leadingBytes, int64_t strideBytes) {
  Value a = arith::AddIOp::create(b, addr, cI64(b, offset));
  a = arith::ShRUIOp::create(b, arith::AndIOp::create(b, a, cI64(b, 0x3FFFF)),
                             cI64(b, 4));
  uint64_t hi = (uint64_t(leadingBytes >> 4) << 16) |
                (uint64_t(strideBytes >> 4) << 32) | (uint64_t(1) << 62);
  return arith::OrIOp::create(b, a, cI64(b, static_cast<int64_t>(hi)));
}

NVVM::WGMMATypes wgmmaType(Type elt) {
  if (isa<Float8E4M3FNType>(elt))
    return NVVM::WGMMATypes::e4m3;
  return elt.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
}

int64_t wgmmaK(Type elt) { return 256 / elt.getIntOrFloatBitWidth(); }

/// MLIR 22 has no op for the register-A form (llvm/llvm-project#133733) and
/// nvvm.inline_ptx mis-orders read-write operands, so this is
/// llvm.inline_asm with the accumulators tied to the outputs.
SmallVector<Value> wgmmaRegisterA(ImplicitLocOpBuilder &b, ArrayRef<Value> acc,
                                  ArrayRef<Value> a, Value descB, int64_t n,
                                  Type elt) {
  int64_t regs = n / 2;
  std::string accList, constraints;
  for (int64_t i = 0; i < regs; ++i) {
    accList += llvm::formatv("{0}${1}", i ? ", " : "", i).str();
    constraints += "=f,";
  }
  for (int64_t i = 0; i < regs; ++i)
    constraints += llvm::formatv("{0},", i).str();
  constraints += "r,r,r,r,l";
  bool fp8 = isa<Float8E4M3FNType>(elt);
  StringRef type = fp8 ? "e4m3" : elt.isBF16() ? "bf16" : "f16";
  // scale-d, imm-scale-a, imm-scale-b[, imm-trans-b: f16/bf16 only].
  StringRef immediates = fp8 ? "1, 1, 1" : "1, 1, 1, 1";
  std::string asmText = llvm::formatv(
      "wgmma.mma_async.sync.aligned.m64n{0}k{9}.f32.{1}.{1} {{{2}}, "
      "{{${3}, ${4}, ${5}, ${6}}, ${7}, {8};",
      n, type, accList, 2 * regs, 2 * regs + 1, 2 * regs + 2, 2 * regs + 3,
      2 * regs + 4, immediates, wgmmaK(elt));
  SmallVector<Value> operands(acc);
  llvm::append_range(operands, a);
  operands.push_back(descB);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, accStruct(b.getContext(), regs), operands, asmText, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  return unpackStruct(b, asmOp.getResult(0), regs);
}

Value issueShared(ImplicitLocOpBuilder &b, Value acc, ArrayRef<Value> descA,
                  ArrayRef<Value> descB, int64_t n, Type elt, bool transposeB) {
  MLIRContext *ctx = b.getContext();
  for (auto [kk, a, bDesc] : llvm::enumerate(descA, descB))
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, acc.getType(), acc, a, bDesc,
        NVVM::MMAShapeAttr::get(ctx, 64, n, wgmmaK(elt)),
        NVVM::WGMMATypesAttr::get(ctx, wgmmaType(elt)),
        NVVM::WGMMATypesAttr::get(ctx, wgmmaType(elt)),
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(ctx, kk == 0 ? NVVM::WGMMAScaleOut::zero
                                                  : NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
        NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(ctx, transposeB ? NVVM::MMALayout::row
                                                 : NVVM::MMALayout::col),
        NVVM::MMAIntOverflowAttr());
  return acc;
}

SmallVector<Value> packPairs(ImplicitLocOpBuilder &b, ArrayRef<Value> x,
                             Type elt) {
  SmallVector<Value> regs;
  for (size_t i = 0; i + 1 < x.size(); i += 2) {
    Value pair = vector::FromElementsOp::create(
        b, VectorType::get({2}, b.getF32Type()), ValueRange{x[i], x[i + 1]});
    Value narrow = arith::TruncFOp::create(b, VectorType::get({2}, elt), pair);
    regs.push_back(vector::ExtractOp::create(
        b,
        vector::BitCastOp::create(b, VectorType::get({1}, b.getI32Type()),
                                  narrow),
        0));
  }
  return regs;
}

SmallVector<Value> pinAfterWait(ImplicitLocOpBuilder &b,
                               ArrayRef<Value> regs) {
  if (regs.empty())
    return {};
  std::string outs, ins;
  for (auto [i, reg] : llvm::enumerate(regs)) {
    outs += reg.getType().isF32() ? "=f," : "=r,";
    ins += llvm::formatv("{0}{1}", i ? "," : "", i).str();
  }
  SmallVector<Type> types(ValueRange(regs).getTypes());
  auto asmOp = LLVM::InlineAsmOp::create(
      b, LLVM::LLVMStructType::getLiteral(b.getContext(), types), regs, "",
      outs + ins,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  SmallVector<Value> pinned;
  for (size_t i = 0; i < regs.size(); ++i)
    pinned.push_back(LLVM::ExtractValueOp::create(b, asmOp.getResult(0), i));
  return pinned;
}

//===----------------------------------------------------------------------===//
// State fragments and warp specialization
//===----------------------------------------------------------------------===//

VectorType threadFragmentType(WgFragmentType t) {
  ArrayRef<int64_t> shape = t.getShape();
  int64_t regs = shape.size() == 1 ? 2 : paddedN(shape[1]) / 2;
  return VectorType::get({regs}, t.getElementType());
}

void addFragmentConversion(TypeConverter &converter) {
  converter.addConversion([](Type t) { return t; });
  converter.addConversion(
      [](WgFragmentType t) -> Type { return threadFragmentType(t); });
}

void lowerWarpSpecialize(
    RewriterBase &rewriter, WarpSpecializeOp ws,
    function_ref<void(ImplicitLocOpBuilder &)> consumerPrologue) {
  ImplicitLocOpBuilder b(ws.getLoc(), rewriter);
  b.setInsertionPoint(ws);
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value isProducer =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tid, cIndex(b, 128));
  auto ifOp = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  auto inlineInto = [&](Region &region, Block *dest, int64_t regs,
                        NVVM::SetMaxRegisterAction action,
                        function_ref<void(ImplicitLocOpBuilder &)> prologue) {
    b.setInsertionPointToStart(dest);
    NVVM::SetMaxRegisterOp::create(b, regs, action);
    if (prologue)
      prologue(b);
    rewriter.inlineBlockBefore(&region.front(), dest->getTerminator());
  };
  inlineInto(ws.getProducer(), ifOp.thenBlock(), ws.getProducerRegisters(),
             NVVM::SetMaxRegisterAction::decrease, {});
  inlineInto(ws.getConsumer(), ifOp.elseBlock(), ws.getConsumerRegisters(),
             NVVM::SetMaxRegisterAction::increase, consumerPrologue);
  if (auto cta = ws->getParentOfType<scf::ForallOp>())
    rewriter.modifyOpInPlace(cta, [&] {
      cta->setAttr(kThreadsAttr, b.getI64IntegerAttr(ws.getNumThreads()));
    });
  rewriter.eraseOp(ws);
}

} // namespace mlir::attn::wgmma
