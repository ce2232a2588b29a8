# lit configuration for attn: FileCheck tests of every pass and pipeline.
import os
import sys
import lit.formats
from lit.llvm import llvm_config

config.name = "attn"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "ASAN_OPTIONS",
                                     "UBSAN_OPTIONS"])
llvm_config.use_default_substitutions()
tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["attn-opt", "attn-compile"], tool_dirs)
# attn-run is built only where nvcc is.
if os.path.exists(os.path.join(config.attn_tools_dir, "attn-run")):
    config.available_features.add("attn-run")
    llvm_config.add_tool_substitutions(["attn-run"], tool_dirs)
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
ptxas = os.path.join(config.cuda_root, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
config.substitutions.append(("%examples", os.path.join(config.attn_src_root, "examples")))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
