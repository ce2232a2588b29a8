//===- NVVMTarget.cpp - the SMs and PTX features attn can target ----------===//

#include "NVVMTarget.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace {

/// The SMs attn can target, with the oldest PTX ISA (x 10) that LLVM's
/// NVPTX back end emits for each; kernels need PTX 8.0 at least. Others
/// would make LLVM abort in instruction selection or ptxas refuse the
/// target (sm_101 is unknown to ptxas 13).
constexpr std::pair<StringLiteral, unsigned> kChips[] = {
    {"sm_80", 80},  {"sm_86", 80},  {"sm_87", 80},  {"sm_89", 80},
    {"sm_90", 80},  {"sm_90a", 80}, {"sm_100", 86}, {"sm_100a", 86},
    {"sm_103", 88}, {"sm_110", 90}, {"sm_120", 87}, {"sm_120a", 87},
    {"sm_121", 88}};

const std::pair<StringLiteral, unsigned> *findChip(StringRef chip) {
  const auto *it = llvm::find_if(
      kChips, [&](const auto &entry) { return entry.first == chip; });
  return it == std::end(kChips) ? nullptr : it;
}

/// The features LLVM's NVPTX back end knows ("ptx80", "sm_90a", ...), read
/// once per process from its subtarget table. An unknown one (+ptx99) is
/// only warned about and dropped by the back end, which then emits its
/// oldest PTX ISA.
const llvm::StringSet<> &knownNVPTXFeatures() {
  static const llvm::StringSet<> known = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    llvm::StringSet<> features;
    std::string error;
    llvm::Triple triple("nvptx64-nvidia-cuda");
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target ? target->createMCSubtargetInfo(triple, "sm_90", "") : nullptr);
    if (sti)
      for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
        features.insert(kv.Key);
    return features;
  }();
  return known;
}

} // namespace

std::string mlir::attn::targetFeatures(StringRef chip, StringRef features) {
  if (!features.empty())
    return features.str();
  const auto *it = findChip(chip);
  return ("+ptx" + Twine(it ? it->second : 80)).str();
}

FailureOr<std::string> mlir::attn::resolveTarget(Location loc, StringRef chip,
                                                 StringRef features) {
  const auto *it = findChip(chip);
  if (!it) {
    std::string known;
    for (const auto &[name, ptx] : kChips)
      known += (known.empty() ? "" : ", ") + name.str();
    return emitError(loc, "attn-lower-to-nvvm: chip '")
           << chip << "' is not supported; supported chips: " << known;
  }
  if (features.empty())
    return targetFeatures(chip, features);
  unsigned ptx = 0;
  size_t at = features.find("+ptx");
  if (at == StringRef::npos ||
      features.drop_front(at + 4).take_while(llvm::isDigit).getAsInteger(10,
                                                                         ptx))
    return emitError(loc, "attn-lower-to-nvvm: features '")
           << features << "' name no PTX ISA version (+ptxNN)";
  const llvm::StringSet<> &known = knownNVPTXFeatures();
  SmallVector<StringRef> list;
  features.split(list, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef feature : list) {
    StringRef name = feature.trim().drop_while([](char c) {
      return c == '+' || c == '-';
    });
    if (!known.contains(name))
      return emitError(loc, "attn-lower-to-nvvm: feature '")
             << feature.trim()
             << "' is unknown to LLVM's NVPTX back end, which would drop "
                "it silently";
  }
  if (ptx < it->second)
    return emitError(loc, "attn-lower-to-nvvm: chip ")
           << chip << " needs PTX ISA " << it->second / 10 << "."
           << it->second % 10 << " or newer (features=+ptx" << it->second
           << "), but features are '" << features << "'";
  return features.str();
}
