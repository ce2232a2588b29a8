"""Writes the PTX of each gpu.binary in attn-opt's output (stdin) to
<dir>/<binary name>.ptx, unescaping MLIR's string escapes (\\XX, \\\\)."""
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
text = sys.stdin.read()
found = re.findall(r'gpu\.binary @(\w+).*?assembly = "((?:[^"\\]|\\.)*)"', text,
                   re.S)
if not found:
    sys.exit("no gpu.binary with PTX in the input")
for name, escaped in found:
    ptx = re.sub(r"\\([0-9A-Fa-f]{2}|\\)",
                 lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1), 16)),
                 escaped)
    (out / f"{name}.ptx").write_text(ptx)
    print(name)
