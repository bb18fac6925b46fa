#!/usr/bin/env python3
"""The ladder's shared headers hold only what the ladder uses, and the ladder includes nothing
from production (docs/KERNELS.md, docs/DESIGN.md).

  tests/kernels/ladder_headers_test.py <repository root>

Fails, naming each offender, if
  - a file of the ladder (kernels/*, not kernels/fast/) includes a kernels/fast/ header; or
  - one of the ladder's headers (kernels/*.cuh) defines, at namespace scope, a function, struct,
    class, enum, alias, constant or macro that nothing outside kernels/fast/ uses: only production
    (kernels/fast/, and the tuning tools and tests built on it) or nothing at all.

"Uses" is by name, comments and strings left out, and transitive: a definition counts as used if
its name occurs in a source outside kernels/fast/, tools/ and tests/ (the ladder's files, the
engine, the apps), or in the text of a header definition that is itself used. Names are matched
as whole words, so a name that production and the ladder both define must differ to be told
apart. CPU only; no compiler needed.
"""
import os
import re
import sys

SOURCE_EXT = (".cu", ".cuh", ".cpp", ".h", ".hpp", ".inc")
# Folders whose uses do not count: production, and what is built on it.
NOT_ROOTS = ("kernels/fast/", "tools/", "tests/", "build", "examples/", ".git/")
ROOT_FOLDERS = ("kernels", "engine", "models", "data", "apps", "base")


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_template_header(stmt):
    """stmt without a leading `template <...>` (possibly several)."""
    while True:
        m = re.match(r"\s*template\s*<", stmt)
        if not m:
            return stmt
        depth, i = 1, m.end()
        while i < len(stmt) and depth:
            depth += {"<": 1, ">": -1}.get(stmt[i], 0)
            i += 1
        stmt = stmt[i:]


NOT_NAMES = {"__launch_bounds__", "__align__", "alignas", "decltype", "__attribute__",
             "sizeof", "static_assert", "noexcept"}


def declared_name(stmt):
    """The name a namespace-scope statement declares, or None."""
    stmt = skip_template_header(stmt).strip()
    if not stmt or stmt.startswith(("static_assert", "extern \"", "namespace", "using namespace")):
        return None
    m = re.match(r"(?:enum\s+class|enum|struct|class|union)\s+(?:__align__\(\d+\)\s*)?(\w+)", stmt)
    if m:
        return m.group(1)
    m = re.match(r"using\s+(\w+)\s*=", stmt)
    if m:
        return m.group(1)
    # A function: the identifier before the first '(' that is not an attribute; a variable: the
    # identifier before '=' (or ';' / '{') when that comes first.
    depth = 0
    for m in re.finditer(r"[<>(={;]|\w+", stmt):
        tok = m.group(0)
        if tok == "<":
            depth += 1
        elif tok == ">":
            depth = max(0, depth - 1)
        elif depth == 0 and tok in "(={;":
            before = re.findall(r"\w+", stmt[: m.start()])
            if tok == "(" and before and before[-1] in NOT_NAMES:
                # skip the attribute's parenthesised argument
                continue
            return before[-1] if before else None
    return None


def namespace_definitions(code):
    """[(name, text)] of the namespace-scope definitions and declarations in code (comments
    stripped), and of its macros."""
    defs = []
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n]*\\\n)*[^\n]*)", code, re.M):
        defs.append((m.group(1), m.group(2)))
    # Blank preprocessor lines (with their continuations) before reading the declarations.
    code = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"), code,
                  flags=re.M)
    depth = 0           # braces inside the current statement
    parens = 0          # parentheses open at its outer level (a default argument's {})
    start = 0           # where the current statement began
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if depth == 0 and c in "()":
            parens += 1 if c == "(" else -1
        elif depth == 0 and parens > 0:
            pass
        elif depth == 0 and c == "{":
            head = code[start:i]
            if re.match(r"\s*(?:inline\s+)?namespace\b[\w:\s]*$", head) or \
               re.match(r"\s*extern\s*\"\"\s*$", head):
                start = i + 1  # a namespace's body is namespace scope
                i += 1
                continue
            depth = 1
        elif c == "{":
            depth += 1
        elif c == "}":
            if depth == 0:  # the end of a namespace
                start = i + 1
            else:
                depth -= 1
                if depth == 0:
                    stmt = code[start:i + 1]
                    # A struct's body ends at "};", a function's at "}".
                    if re.match(r"\s*;", code[i + 1:]):
                        pass  # the ';' ends the statement below
                    else:
                        name = declared_name(stmt)
                        if name:
                            defs.append((name, stmt))
                        start = i + 1
        elif c == ";" and depth == 0:
            stmt = code[start:i + 1]
            name = declared_name(stmt)
            if name:
                defs.append((name, stmt))
            start = i + 1
        i += 1
    return defs


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    kernels = os.path.join(root, "kernels")
    failures = []

    ladder = sorted(f for f in os.listdir(kernels)
                    if f.endswith(SOURCE_EXT) and os.path.isfile(os.path.join(kernels, f)))
    headers = [f for f in ladder if f.endswith(".cuh")]
    if not headers or "01_naive.cu" not in ladder:
        print("FAIL: no ladder under %s" % kernels)
        return 1

    # 1. The ladder includes nothing from production.
    for f in ladder:
        with open(os.path.join(kernels, f), encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if re.match(r'\s*#\s*include\s*[<"](?:kernels/)?fast/', line):
                    failures.append("kernels/%s:%d includes production: %s"
                                    % (f, number, line.strip()))

    # 2. Every namespace-scope definition of a ladder header is used outside production.
    definitions = []  # (header, name, text)
    for f in headers:
        with open(os.path.join(kernels, f), encoding="utf-8") as fh:
            code = strip_comments_and_strings(fh.read())
        definitions += [(f, name, text) for name, text in namespace_definitions(code)]
    header_paths = {os.path.join("kernels", f) for f in headers}

    roots = []  # the code of every source whose uses count
    fast = []   # production's, for the message
    for folder in ROOT_FOLDERS + ("tools", "tests"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for f in files:
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if rel in header_paths:
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    code = strip_comments_and_strings(fh.read())
                (fast if rel.startswith(NOT_ROOTS) else roots).append(code)

    def words(text):
        return set(re.findall(r"\w+", text))

    used = set()
    for code in roots:
        used |= words(code)
    names = {name for _, name, _ in definitions}
    live = names & used
    changed = True
    while changed:  # what the used definitions' own text uses
        changed = False
        for _, name, text in definitions:
            if name in live:
                new = (words(text) & names) - live
                if new:
                    live |= new
                    changed = True

    fast_words = set()
    for code in fast:
        fast_words |= words(code)
    reported = set()
    for f, name, _ in definitions:
        if name in live or (f, name) in reported:
            continue
        reported.add((f, name))
        where = ("only by production (kernels/fast/, tools/, tests/): move it to kernels/fast/"
                 if name in fast_words else "by nothing: delete it")
        failures.append("kernels/%s defines %s, used %s" % (f, name, where))

    for message in failures:
        print("FAIL: " + message)
    if not failures:
        print("ladder_headers_test: %d headers, %d definitions, all used by the ladder; "
              "no ladder file includes kernels/fast/" % (len(headers), len(definitions)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
