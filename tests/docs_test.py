#!/usr/bin/python3
"""The manual cannot drift from the code: README.md, HACKING.md,
BENCHMARKS.md and docs/*.md are checked as HACKING.md ("Tested
documentation") describes.

- every relative link and #anchor resolves;
- every shell or Python block marked <!-- test --> runs, in order, in a
  fresh directory per page (examples/ and build/ linked in, autocat on PATH),
  and a block marked <!-- output --> after it matches its standard output
  (timings and timestamps masked; a line "..." matches any lines);
- every C++ block is marked <!-- from FILE --> and is a verbatim excerpt of
  FILE (indentation aside), and every Python block is run or an excerpt;
- help(autocat) shows autocat's own documentation, every public name with a
  docstring and nothing inherited from xapian.

usage: docs_test.py SOURCE_DIR AUTOCAT SEARCH_APP PYTHON_DIR WORK_DIR
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

FENCE = re.compile(r"^```([\w+-]*)\s*$")
MARK = re.compile(r"^<!--\s*(test|output|from\s+(\S+))\s*-->\s*$")
TIMEOUT_S = 60

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")


def blocks(path):
    """Yields (line number, language, mark, from-file, text) of each fenced block."""
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, language = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        previous = lines[start - 1] if start > 0 else ""
        mark = MARK.match(previous)
        kind = mark.group(1).split()[0] if mark else None
        source = mark.group(2) if mark else None
        yield start + 1, language, kind, source, "\n".join(lines[start + 1:j]) + "\n"
        i = j + 1


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, result = {}, set()
    in_code = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        base = slug(line.lstrip("#"))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def check_links(source, documents):
    cache = {}
    for path in documents:
        text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(source)}: link {target}"
            if not resolved.exists():
                fail(where, "no such file")
                continue
            if anchor:
                if resolved.suffix != ".md":
                    fail(where, "an anchor into a file that is not Markdown")
                    continue
                if resolved not in cache:
                    cache[resolved] = anchors(resolved)
                if anchor not in cache[resolved]:
                    fail(where, f"no heading with the anchor #{anchor}")


def mask(text):
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
    text = re.sub(r"\d[\d,]*(\.\d+)?( ?(s|ms|seconds)\b| docs/s)", "N", text)
    return [line.rstrip() for line in text.strip("\n").split("\n")]


def matches(expected, actual):
    """Whether the lines `actual` match `expected`, where "..." matches any lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def check_excerpt(source, where, language, from_file, text):
    path = source / from_file
    if not path.exists():
        fail(where, f"<!-- from {from_file} -->: no such file")
        return
    wanted = [line.strip() for line in text.strip("\n").split("\n")]
    have = [line.strip() for line in path.read_text(encoding="utf-8").split("\n")]
    if not any(have[k:k + len(wanted)] == wanted for k in range(len(have))):
        fail(where, f"this {language} block is not a verbatim excerpt of {from_file}: copy it again")


def run_page(source, path, work, environment):
    page = [b for b in blocks(path) if b[2] in ("test", "output") or
            b[1] in ("cpp", "c++", "python")]
    name = str(path.relative_to(source))
    directory = work / name.replace("/", "_")
    ran = False
    last = None
    for line, language, kind, from_file, text in page:
        where = f"{name}:{line}"
        if language in ("cpp", "c++") or (language == "python" and kind != "test"):
            if kind != "from":
                fail(where, f"a {language} block must be marked <!-- from FILE --> "
                     "(an excerpt of a built example)" +
                     (" or <!-- test -->" if language == "python" else ""))
            else:
                check_excerpt(source, where, language, from_file, text)
            continue
        if kind == "output":
            if last is None:
                fail(where, "<!-- output --> without a tested block before it")
            elif not matches(mask(text), mask(last)):
                fail(where, "the output differs from the block's:\n--- expected\n" + text +
                     "--- got\n" + last)
            continue
        if kind != "test":
            continue
        if not ran:
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir(parents=True)
            (directory / "examples").symlink_to(source / "examples")
            (directory / "build" / "indexer").mkdir(parents=True)
            (directory / "build" / "examples").mkdir()
            (directory / "build" / "indexer" / "autocat").symlink_to(environment["AUTOCAT"])
            (directory / "build" / "examples" / "search_app").symlink_to(environment["SEARCH_APP"])
            (directory / "build" / "python").symlink_to(environment["PYTHON_DIR"])
            ran = True
        if language == "sh":
            command = ["bash", "-e", "-o", "pipefail", "-c", text]
        elif language == "python":
            command = ["/usr/bin/python3", "-c", text]
        else:
            fail(where, f"<!-- test --> on a {language or 'plain'} block: only sh and python run")
            continue
        started = time.monotonic()
        try:
            done = subprocess.run(command, cwd=directory, env=environment["env"], text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            fail(where, f"the block ran longer than {TIMEOUT_S} s")
            last = ""
            continue
        last = done.stdout
        if done.returncode != 0:
            fail(where, f"the block exited {done.returncode}:\n{text}--- stdout\n"
                 f"{done.stdout[-2000:]}--- stderr\n{done.stderr[-2000:]}")
        print(f"{where}: {language} block ran in {time.monotonic() - started:.1f} s")
    return ran


def check_help(environment):
    script = r"""
import pydoc, autocat
text = pydoc.render_doc(autocat, renderer=pydoc.plaintext)
assert "inherited from xapian" not in text, "help(autocat) repeats xapian's documentation"
missing = [n for n in autocat.__all__ if callable(getattr(autocat, n))
           and not (getattr(autocat, n).__doc__ or "").strip()]
assert not missing, "no docstring: " + ", ".join(missing)
for name in ("CategoryIndexer", "CategoryFacetSpy"):
    cls = getattr(autocat, name)
    for member, value in vars(cls).items():
        if callable(value) and not member.startswith("_") and not (value.__doc__ or "").strip():
            raise AssertionError(f"no docstring: {name}.{member}")
print(len(text.splitlines()), "lines of help(autocat)")
"""
    done = subprocess.run(["/usr/bin/python3", "-c", script], env=environment["env"], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        fail("help(autocat)", done.stdout.strip().splitlines()[-1])
    else:
        print(done.stdout.strip())


def main():
    if len(sys.argv) != 6:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source = pathlib.Path(sys.argv[1]).resolve()
    work = pathlib.Path(sys.argv[5]).resolve()
    env = dict(os.environ)
    env["PATH"] = str(pathlib.Path(sys.argv[2]).resolve().parent) + os.pathsep + env["PATH"]
    env["PYTHONPATH"] = str(pathlib.Path(sys.argv[4]).resolve())
    environment = {"AUTOCAT": pathlib.Path(sys.argv[2]).resolve(),
                   "SEARCH_APP": pathlib.Path(sys.argv[3]).resolve(),
                   "PYTHON_DIR": pathlib.Path(sys.argv[4]).resolve(), "env": env}
    documents = [source / "README.md", source / "HACKING.md", source / "BENCHMARKS.md"]
    documents += sorted((source / "docs").glob("*.md"))
    check_links(source, documents)
    pages = [p for p in documents if run_page(source, p, work, environment)]
    for required in ("README.md", "docs/training.md", "docs/indexing.md", "docs/python.md"):
        if source / required not in pages:
            fail(required, "no block marked <!-- test -->")
    check_help(environment)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        print(f"docs_test: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"docs_test: ok ({len(documents)} documents, {len(pages)} with tested examples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
