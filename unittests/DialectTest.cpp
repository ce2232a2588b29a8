//===- DialectTest.cpp - building and verifying attn ops from C++ ---------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

struct AttentionBuilder {
  MLIRContext ctx;
  OpBuilder b{&ctx};
  OwningOpRef<ModuleOp> module;

  AttentionBuilder() {
    ctx.loadDialect<attn::AttnDialect, func::FuncDialect>();
    module = ModuleOp::create(b.getUnknownLoc());
  }

  /// Builds func @f(q, k, v, o[, lse]) { attn.attention ... } and returns the
  /// attention op.
  attn::AttentionOp build(ArrayRef<int64_t> qShape, ArrayRef<int64_t> kvShape,
                          Type elt, bool withLse, bool causal) {
    auto q = MemRefType::get(qShape, elt);
    auto kv = MemRefType::get(kvShape, elt);
    SmallVector<Type> args = {q, kv, kv, q};
    if (withLse)
      args.push_back(MemRefType::get(qShape.take_front(3), b.getF32Type()));
    b.setInsertionPointToEnd(module->getBody());
    auto fn = func::FuncOp::create(b, b.getUnknownLoc(), "f",
                                   b.getFunctionType(args, {}));
    Block *body = fn.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value lse = withLse ? body->getArgument(4) : Value();
    auto op = attn::AttentionOp::create(
        b, b.getUnknownLoc(), body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArgument(3), lse, Value(), Value(),
        Value(), /*block_table=*/Value(), /*cache_seqlens=*/Value(),
        /*sinks=*/Value(), /*alibi_slopes=*/Value(), FloatAttr(),
        causal ? b.getUnitAttr() : UnitAttr(),
        /*key_mask=*/nullptr, /*q_descale_block=*/nullptr,
        /*k_descale_block=*/nullptr, /*softcap=*/nullptr);
    func::ReturnOp::create(b, b.getUnknownLoc());
    return op;
  }

  /// Verifies the module and returns the first diagnostic (empty if valid).
  std::string verifyMessage() {
    std::string msg;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      if (msg.empty())
        msg = d.str();
      return success();
    });
    (void)verify(*module);
    return msg;
  }
};

TEST(AttentionOp, BuildsAndVerifiesLlamaPrefill) {
  AttentionBuilder t;
  auto op = t.build({1, 32, 8192, 128}, {1, 8, 8192, 128},
                    t.b.getBF16Type(), /*withLse=*/true, /*causal=*/true);
  EXPECT_EQ(t.verifyMessage(), "");
  EXPECT_EQ(op.getHeadDim(), 128);
  EXPECT_FLOAT_EQ(op.getScaleOrDefault(), 1.0f / std::sqrt(128.0f));
  EXPECT_TRUE(op.getCausal());
  EXPECT_FALSE(op.isFP8());
}

TEST(AttentionOp, DynamicSequenceLengthsVerify) {
  AttentionBuilder t;
  t.build({2, 16, ShapedType::kDynamic, 64}, {2, 4, ShapedType::kDynamic, 64},
          t.b.getF16Type(), /*withLse=*/false, /*causal=*/false);
  EXPECT_EQ(t.verifyMessage(), "");
}

TEST(AttentionOp, RejectsHeadCountsThatAreNotAMultiple) {
  AttentionBuilder t;
  t.build({1, 32, 128, 64}, {1, 5, 128, 64}, t.b.getF16Type(), false, false);
  std::string msg = t.verifyMessage();
  EXPECT_NE(msg.find("operand 'q' head count Hq (32) must be a positive "
                     "multiple of operand 'k' head count Hkv (5)"),
            std::string::npos)
      << msg;
}

TEST(AttentionOp, RejectsHeadDimMismatch) {
  AttentionBuilder t;
  t.build({1, 8, 128, 64}, {1, 8, 128, 128}, t.b.getBF16Type(), false, false);
  std::string msg = t.verifyMessage();
  EXPECT_NE(msg.find("operand 'k' head dim D must equal q's (64), but got 128"),
            std::string::npos)
      << msg;
}

} // namespace
