#!/usr/bin/python3
"""Doxygen's INPUT_FILTER for autocat's public headers.

The headers are commented in plain `//` sentences (docs/STYLE: LevelDB's
way), which Doxygen does not read as documentation. This filter hands
Doxygen the same text with the comments it should read marked, line for
line (so warnings name the header's own line numbers):
- the comment that opens a header documents the file (`\\file`);
- a comment on lines of its own documents the declaration below it;
- a comment after a declaration on its line (`int k = 10;  // ...`), and
  comment lines right below it in the same column, document that
  declaration.
Comments inside function bodies and after a closing brace stay plain.

usage: doxygen_filter.py HEADER   (writes the filtered text to stdout)
"""

import re
import sys

COMMENT = re.compile(r"^(\s*)//(?!/)\s?(.*)$")
TRAILING = re.compile(r"^(\s*[^\s/}#].*?[;,])(\s*)//(?!/)\s?(.*)$")


def main():
    lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
    out = []
    at_top = True
    top_end = None
    after_trailing = None  # the column of the last line's trailing comment
    depth_in_body = 0  # braces of inline function bodies
    for line in lines:
        comment = COMMENT.match(line)
        if depth_in_body > 0:
            depth_in_body += line.count("{") - line.count("}")
            out.append(line)
            continue
        if comment:
            indent, text = comment.groups()
            if at_top:
                out.append(f"/// {text}")
                top_end = len(out) - 1
            elif after_trailing is not None and len(indent) == after_trailing:
                out.append(f"{indent}///< {text}")
            else:
                out.append(f"{indent}/// {text}")
            continue
        at_top = at_top and not line.strip()
        trailing = TRAILING.match(line)
        if trailing:
            code, space, text = trailing.groups()
            out.append(f"{code}{space}///< {text}")
            after_trailing = len(code) + len(space)
            continue
        after_trailing = None
        out.append(line)
        # An inline function body: a line ending in `{` after a `)` (or
        # `) const`, `) noexcept`...), not a class, struct, enum or namespace.
        stripped = line.strip()
        if stripped.endswith("{") and ")" in stripped and not re.match(
                r"(class|struct|enum|namespace|union)\b", stripped):
            depth_in_body = 1
    if top_end is not None:
        # \\file without a name, at the end of the opening comment's last
        # line: that comment documents this file.
        out[top_end] += " \\file"
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
