//===- QuantizeFP8.cpp - the quantize step of quantized bundle kernels ----===//

#include "QuantizeFP8.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Target/Bundle.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;
namespace bundle = ::attn::bundle;
using bundle::Operand;

namespace {

/// Tags of the buffers the FP8 attention reads, in attn.attention's operand
/// order: the e4m3 copies of q, k, v and their descales.
constexpr std::pair<llvm::StringLiteral, Operand> kQuantizeBuffers[] = {
    {"q_fp8", Operand::Q},
    {"k_fp8", Operand::K},
    {"v_fp8", Operand::V},
    {"q_descale", Operand::QDescale},
    {"k_descale", Operand::KDescale},
    {"v_descale", Operand::VDescale}};

/// Tags, on their memref.alloc, the buffers attn-quantize-fp8 made for the
/// FP8 attn.attention of `func`.
LogicalResult tagQuantizeBuffers(func::FuncOp func) {
  AttentionOp op;
  func.walk([&](AttentionOp a) { op = a; });
  if (!op || !op.isFP8())
    return func.emitError("attn-quantize-fp8 left no FP8 attn.attention");
  Value values[] = {op.getQ(),        op.getK(),        op.getV(),
                    op.getQDescale(), op.getKDescale(), op.getVDescale()};
  for (auto [value, named] : llvm::zip(values, kQuantizeBuffers)) {
    auto alloc = viewedBuffer(value).getDefiningOp<memref::AllocOp>();
    if (!alloc)
      return op.emitOpError("operand '")
             << bundle::operandName(named.second)
             << "' is not a buffer attn-quantize-fp8 allocated";
    alloc->setAttr(kWorkspaceTag,
                   StringAttr::get(func.getContext(), named.first));
  }
  return success();
}

} // namespace

Value mlir::attn::viewedBuffer(Value view) {
  while (Operation *def = view.getDefiningOp()) {
    if (auto sub = dyn_cast<memref::SubViewOp>(def))
      view = sub.getSource();
    else if (auto transpose = dyn_cast<memref::TransposeOp>(def))
      view = transpose.getIn();
    else
      break;
  }
  return view;
}

std::optional<Operand> mlir::attn::quantizedCopyOf(StringRef name) {
  for (auto [tag, operand] : ArrayRef(kQuantizeBuffers).take_front(3))
    if (tag == name)
      return operand;
  return std::nullopt;
}

LogicalResult mlir::attn::quantizeFunction(ModuleOp module, func::FuncOp func,
                                           bundle::FwdKey &key) {
  PassManager pm(module.getContext());
  std::string normalized, error;
  llvm::raw_string_ostream errors(error);
  if (failed(addQuantizeFP8Pass(pm, *key.quantizeFp8, key.blockM, key.blockN,
                                &normalized, errors)))
    return func.emitError("attribute 'attn.quantize_fp8' = \"")
           << *key.quantizeFp8 << "\": " << StringRef(error).trim()
           << " (attn-quantize-fp8 options, e.g. \"qk-granularity=tensor\")";
  if (failed(pm.run(module)) || failed(tagQuantizeBuffers(func)))
    return failure();
  key.quantizeFp8 = normalized;
  return success();
}

/// "attn-quantize-fp8{block-m=128 ...}": the options inside the braces.
static std::string printedOptions(Pass &pass) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  return StringRef(text).split('{').second.rsplit('}').first.str();
}

LogicalResult mlir::attn::addQuantizeFP8Pass(OpPassManager &pm,
                                             StringRef options, int64_t blockM,
                                             int64_t blockN,
                                             std::string *normalized,
                                             llvm::raw_ostream &errors) {
  std::unique_ptr<Pass> pass = createAttnQuantizeFP8();
  // The pass parses its options strictly (StrictOptions.h): `message`
  // names the pass, the option and why.
  auto onError = [&](const Twine &message) {
    errors << message;
    return failure();
  };
  // The text's own values win over the block sizes set first.
  std::string blocks = llvm::formatv("block-m={0} block-n={1}", blockM, blockN);
  if (failed(pass->initializeOptions(blocks, onError)) ||
      failed(pass->initializeOptions(options, onError)))
    return failure();
  if (normalized)
    *normalized = printedOptions(*pass);
  pm.nest<func::FuncOp>().addPass(std::move(pass));
  return success();
}

std::string mlir::attn::quantizeRecipe(StringRef options) {
  std::unique_ptr<Pass> pass = createAttnQuantizeFP8();
  auto ignore = [](const Twine &) { return failure(); };
  // The scale blocks follow the tile (a schedule choice): leave them out.
  if (failed(pass->initializeOptions(options, ignore)) ||
      failed(pass->initializeOptions("block-m=0 block-n=0", ignore)))
    return options.str();
  std::string printed = printedOptions(*pass);
  SmallVector<StringRef> kept;
  for (StringRef option : llvm::split(printed, ' '))
    if (!option.starts_with("block-m=") && !option.starts_with("block-n="))
      kept.push_back(option);
  return llvm::join(kept, " ");
}
