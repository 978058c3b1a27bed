"""docs/architecture.md's "Writing a block" code is the example's: snippet_test.py SOURCE_DIR.

Every line of code in the section's C++ block (whole-line comments aside) appears in
examples/incrementer.cpp, in the same order, so the snippet is code that builds and runs."""
import re
import sys

src = sys.argv[1]
doc = open(f"{src}/docs/architecture.md").read()
section = doc.split("## Writing a block", 1)[1]
block = re.search(r"```cpp\n(.*?)```", section, re.S).group(1)
wanted = [l.strip() for l in block.splitlines() if l.strip() and not l.strip().startswith("//")]
have = [l.strip() for l in open(f"{src}/examples/incrementer.cpp")]
at = 0
for line in wanted:
    try:
        at = have.index(line, at) + 1
    except ValueError:
        sys.exit(f"FAIL: docs/architecture.md line not in examples/incrementer.cpp (in order): {line}")
print(f"ok: {len(wanted)} lines of the snippet in examples/incrementer.cpp, in order")
