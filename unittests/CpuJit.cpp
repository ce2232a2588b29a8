//===- CpuJit.cpp - JIT for the CPU-executed tests ------------------------===//

#include "CpuJit.h"

#include "attn/Pipelines/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <mutex>

using namespace mlir;

namespace {
llvm::Expected<llvm::orc::JITTargetMachineBuilder>
machineBuilder(attn::test::TargetCpu cpu) {
  if (cpu == attn::test::TargetCpu::Host)
    return llvm::orc::JITTargetMachineBuilder::detectHost();
  llvm::orc::JITTargetMachineBuilder builder(
      llvm::Triple(llvm::sys::getProcessTriple()));
  if (builder.getTargetTriple().getArch() == llvm::Triple::x86_64)
    builder.setCPU("x86-64");
  // The tests check what the IR computes, not how fast: -O0 compiles the
  // fully unrolled tile code about twice as fast as the default -O2.
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  return builder;
}
} // namespace

llvm::Expected<std::unique_ptr<ExecutionEngine>>
mlir::attn::test::createEngine(ModuleOp module, TargetCpu cpu) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto builder = machineBuilder(cpu);
  if (!builder)
    return builder.takeError();
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  // ExecutionEngine ignores its jitCodeGenOptLevel option when given a
  // TargetMachine: the level is set on the builder above.
  return ExecutionEngine::create(module, {}, std::move(*machine));
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
mlir::attn::test::compileOnCpu(llvm::StringRef source,
                               const CpuPipeline &pipeline, TargetCpu cpu) {
  DialectRegistry registry;
  registerAttnDialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &ctx);
  if (!module)
    return llvm::createStringError("cannot parse:\n" + source);
  PassManager pm(&ctx);
  CPUPipelineOptions options;
  options.blockM = pipeline.blockM;
  options.blockN = pipeline.blockN;
  options.splits = pipeline.splits;
  options.packGqa = pipeline.packGqa;
  buildCPUPipeline(pm, options);
  if (failed(pm.run(*module)))
    return llvm::createStringError("attn-to-cpu failed on:\n" + source);
  return createEngine(*module, cpu);
}
