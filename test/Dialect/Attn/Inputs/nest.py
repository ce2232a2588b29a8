"""Prints a function whose body nests N scf.execute_region regions: with
the function's own body, N + 1 levels of braces. Brackets in a string and
in a comment, and the arrow of an affine map, must not count."""
import sys

n = int(sys.argv[1])
print('func.func @nested() attributes {noise = "' + "{[(<" * 300 + '",'
      " map = affine_map<(d0) -> (d0)>} {")
for _ in range(n):
    print("scf.execute_region {")
print("// " + "{[(<" * 300)
for _ in range(n):
    print("scf.yield")
    print("}")
print("return")
print("}")
