#!/usr/bin/env python3
"""Docs as tests (issue 43): the manual says what the programs print.

  check-docs.py run BUILD [--long] [--page FILE] [--list]
      Runs every doc test of README.md and docs/*.md (docs/results/ is history, not run) and
      compares what it prints with the page. A doc test is an indented code block whose first line
      is `$ COMMAND` (a line ending in \\ continues it); the lines after it, up to the block's end,
      are the command's standard output, compared line by line (trailing blanks ignored). Lines that
      legitimately vary are marked in the page:
        {{...}}        inside a line: any text (a time, a path, a rate);
        a line that is only {{...}}: any number of lines, none included (an excerpt's gap).
      Each command runs with bash from a scratch folder that sees the source tree's traces/, tests/,
      plots/ and the build's bin/ as build/bin (as README's quick start is run), with
      SALUS_DATA_DIR unset; it must exit 0 (its standard error is shown on failure, not compared).
      A comment line just before the block marks it:
        <!-- doc-test: long -->      over about 30 s: not run in CI, run with --long (by hand,
                                      or scripts/check-docs.py run build --long --page docs/paper.md);
        <!-- doc-test: exit N -->    the command is expected to exit with status N;
        <!-- doc-test: stderr -->    the lines are its standard error (an error message), not its
                                      standard output;
        <!-- doc-test: public -->    it reads a public trace from $PUBLIC (not in this repository):
                                      run only with --public DIR (DIR holding the files it names,
                                      as published: 60_job.csv from the Tiresias repository's
                                      simulator/, ...); markers combine: <!-- doc-test: long; public -->.
      --list prints each doc test (page:line, long or public, the command) and runs nothing.
      What CI does not run (long, public) is run by hand:
        scripts/check-docs.py run build --long --public DIR

  check-docs.py programs BUILD [--write]
      docs/programs.md's option tables are each program's --help: every table between
      `<!-- options: PROGRAM ... -->` and `<!-- end options -->` is generated from that --help (one
      row per option line of boost::program_options' output, the name column cut where the
      description column starts). Without --write, a table that differs from the generated one
      fails, and so does any option that --help lists (a line starting with "  -") without a row.

  check-docs.py refs [BUILD]
      Every cross-reference names what exists: a markdown link's file and its #anchor (a heading of
      that page), and every `PAGE.md, "Heading"` or `PAGE.md#anchor` named in the docs, in code
      (*.cpp, *.h, *.py, *.sh) and, with BUILD, in each program's --help, names a page and a
      heading it has. "see the README" / "the README says" without a page are refused too.

Exit status: 0 all good; 1 a check failed (each failure named); 2 bad usage.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WILD = "{{...}}"


def fail_usage(msg):
    print("check-docs: " + msg, file=sys.stderr)
    sys.exit(2)


def bin_dir(build):
    for d in ("bin", "experiments"):
        p = os.path.join(build, d)
        if os.path.exists(os.path.join(p, "salus-sim")):
            return p
    fail_usage("no salus-sim in %s/bin (build it first)" % build)


def doc_pages():
    pages = [os.path.join(SRC, "README.md")]
    docs = os.path.join(SRC, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    return pages


# ---------------------------------------------------------------------------------------------
# Doc tests.

class DocTest:
    def __init__(self, page, line, command, expected, long_, exit_status, public, stderr):
        self.page, self.line, self.command, self.expected = page, line, command, expected
        self.long, self.exit_status, self.public, self.stderr = long_, exit_status, public, stderr

    def where(self):
        rel = os.path.relpath(self.page, SRC)
        return "%s:%d" % (self.page if rel.startswith("..") else rel, self.line)


def doc_tests(page):
    """The doc tests of one page: indented blocks opening with `$ `."""
    lines = open(page, encoding="utf-8").read().split("\n")
    tests = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("    $ "):
            i += 1
            continue
        # The block must open here (a blank line or a marker before it).
        marker = lines[i - 1].strip() if i > 0 else ""
        long_ = public = stderr = False
        exit_status = 0
        m = re.fullmatch(r"<!-- doc-test: (.*) -->", marker)
        if m:
            for word in m.group(1).split(";"):
                word = word.strip()
                if word == "long":
                    long_ = True
                elif word == "public":
                    public = True
                elif word == "stderr":
                    stderr = True
                elif re.fullmatch(r"exit \d+", word):
                    exit_status = int(word.split()[1])
                else:
                    raise SystemExit("check-docs: %s:%d: unknown doc-test marker '%s' (long, public, stderr, exit N)"
                                     % (os.path.relpath(page, SRC), i, word))
        start = i
        cmd = line[6:]
        i += 1
        while cmd.endswith("\\") and i < len(lines) and lines[i].startswith("    "):
            cmd = cmd[:-1] + " " + lines[i].strip()
            i += 1
        expected = []
        while i < len(lines):
            if lines[i].startswith("    $ "):
                break
            if lines[i].startswith("    "):
                expected.append(lines[i][4:].rstrip())
            elif not lines[i].strip():
                # a blank line stays in the block when an indented line follows it (markdown)
                k = i
                while k < len(lines) and not lines[k].strip():
                    k += 1
                if k == len(lines) or not lines[k].startswith("    ") or lines[k].startswith("    $ "):
                    break
                expected.append("")
            else:
                break
            i += 1
        tests.append(DocTest(page, start + 1, cmd, expected, long_, exit_status, public, stderr))
    return tests


def line_regex(pattern):
    parts = pattern.split(WILD)
    return re.compile(".*".join(re.escape(p) for p in parts) + r"\Z", re.S)


def match_lines(expected, actual):
    """True when `actual` (lines) matches `expected` with its wildcards."""
    memo = {}

    def go(e, a):
        key = (e, a)
        if key in memo:
            return memo[key]
        if e == len(expected):
            r = a == len(actual)
        elif expected[e].strip() == WILD:
            r = any(go(e + 1, k) for k in range(a, len(actual) + 1))
        elif a == len(actual):
            r = False
        else:
            r = line_regex(expected[e]).match(actual[a]) is not None and go(e + 1, a + 1)
        memo[key] = r
        return r

    sys.setrecursionlimit(max(10000, 4 * (len(expected) + len(actual))))
    return go(0, 0)


def report(problems, ok):
    """A check's end: each problem as a FAIL line and status 1, else `ok` and status 0."""
    for p in problems:
        print("FAIL " + p)
    if problems:
        return 1
    print(ok)
    return 0


def scratch(build):
    work = tempfile.mkdtemp(prefix="check-docs.")
    for d in ("traces", "tests", "plots", "docs"):
        os.symlink(os.path.join(SRC, d), os.path.join(work, d))
    os.makedirs(os.path.join(work, "build"))
    os.symlink(bin_dir(build), os.path.join(work, "build", "bin"))
    return work


def cmd_run(args):
    build = os.path.abspath(args.build)
    bin_dir(build)
    tests = []
    if args.page:
        # a page of the docs, or any markdown file (tests/docs/ checks the runner on its own pages)
        page = args.page if os.path.isfile(args.page) else os.path.join(SRC, args.page)
        if not os.path.isfile(page):
            fail_usage("--page %s: no such file" % args.page)
        pages = [os.path.abspath(page)]
    else:
        pages = doc_pages()
    for page in pages:
        tests += doc_tests(page)
    if not tests:
        fail_usage("no doc tests found" + (" in " + args.page if args.page else ""))
    if args.list:
        for t in tests:
            print("%-24s %-12s %s" % (t.where(), " ".join(w for w, on in (("long", t.long), ("public", t.public)) if on),
                                       t.command))
        return 0
    work = scratch(build)
    env = dict(os.environ)
    env.pop("SALUS_DATA_DIR", None)
    env["COLUMNS"] = "100"
    if args.public:
        env["PUBLIC"] = os.path.abspath(args.public)
    failed = ran = skipped = 0
    try:
        for t in tests:
            if (t.long and not args.long) or (t.public and not args.public):
                skipped += 1
                continue
            t0 = time.time()
            p = subprocess.run(["bash", "-c", t.command], cwd=work, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
            dt = time.time() - t0
            ran += 1
            out = (p.stderr if t.stderr else p.stdout).decode("utf-8", "replace").split("\n")
            while out and out[-1] == "":
                out.pop()
            out = [o.rstrip() for o in out]
            problems = []
            if p.returncode != t.exit_status:
                problems.append("exit status %d, the page expects %d" % (p.returncode, t.exit_status))
            if not match_lines(t.expected, out):
                diff = difflib.unified_diff(t.expected, out, "the page", "the program", lineterm="", n=1)
                problems.append("its output differs from the page:\n" + "\n".join("    " + d for d in diff))
            if not t.long and dt > 30:
                problems.append("took %.0f s: mark it <!-- doc-test: long --> (CI runs tests under 30 s)" % dt)
            if problems:
                failed += 1
                print("FAIL %s  %s" % (t.where(), t.command))
                for pr in problems:
                    print("  " + pr)
                err = p.stderr.decode("utf-8", "replace").strip()
                if err and p.returncode != t.exit_status:
                    print("  stderr: " + err[-600:])
            else:
                print("ok   %s  %5.1f s  %s" % (t.where(), dt, t.command))
    finally:
        subprocess.run(["rm", "-rf", work])
    print("doc tests: %d ran, %d failed, %d not run (long: --long; public traces: --public DIR)"
          % (ran, failed, skipped))
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# programs.md from --help.

PROGRAM_HELP = {
    "salus-sim": ["salus-sim", "--help"],
    "salus-run": ["salus-run", "--help"],
    "salus-profile": ["salus-profile", "--help"],
    "salus-trace generate": ["salus-trace", "generate", "--help"],
    "salus-trace stats": ["salus-trace", "stats", "--help"],
    "salus-experiment": ["salus-experiment", "--help"],
    "salus-catalog": ["salus-catalog", "--help"],
}
OPTION_LINE = re.compile(r"^  (?:-\w \[ )?--[A-Za-z0-9][\w-]*")


def help_text(build, program):
    argv = PROGRAM_HELP.get(program)
    if argv is None:
        fail_usage("docs/programs.md names a table for '%s', which is not a program with options (%s)"
                   % (program, ", ".join(PROGRAM_HELP)))
    env = dict(os.environ)
    env["SALUS_DATA_DIR"] = "traces"  # relative: the defaults read traces/..., as the page shows them
    p = subprocess.run([os.path.join(bin_dir(build), argv[0])] + argv[1:], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, cwd=SRC)
    if p.returncode != 0:
        raise SystemExit("check-docs: %s exited %d" % (" ".join(argv), p.returncode))
    return p.stdout.decode("utf-8")


def parse_help(text):
    """The option rows of boost::program_options' --help: [(name column, description)].

    The option block is the run of lines after a line ending in ':' whose first line starts with
    "  -". An option line starts with "  -"; a continuation line starts with spaces up to the
    description column. The description column is where the continuation lines start (Boost
    indents every one to it); an option line is cut there, never at a run of spaces, so a long
    name followed by one space stays one row."""
    lines = text.split("\n")
    starts = [i for i, l in enumerate(lines) if OPTION_LINE.match(l)]
    if not starts:
        return [], []
    first = starts[0]
    end = first
    while end < len(lines) and lines[end].strip() and (lines[end].startswith("  ")):
        end += 1
    block = lines[first:end]
    conts = [len(l) - len(l.lstrip(" ")) for l in block if not OPTION_LINE.match(l)]
    if conts:
        col = min(conts)
    else:  # no option wraps: the column is where the description starts on the longest name
        col = max(re.match(r"^(  \S.*?\S?)(?:  +|$)", l).end() for l in block)
    width = max(len(l) for l in block)
    rows = []
    for l in block:
        if OPTION_LINE.match(l):
            if len(l.rstrip()) > col and l[col - 1] != " ":
                # a name longer than the column: Boost starts its description on the next line
                name, desc = l.rstrip(), ""
            else:
                name, desc = l[:col].rstrip(), l[col:].lstrip(" ")
            rows.append([name.strip(), desc])
            prev_line = l
            continue
        else:
            if not rows:
                raise SystemExit("check-docs: a description line before any option: %r" % l)
            # Boost's format_paragraph: a full line ending at a word's end is cut there (the next
            # line's leading space dropped); a line ending inside a word is cut after the last space
            # of its second half (the space kept at the end), or, with none there, inside the word
            # (a full line whose last word is at least half the column's width)
            prev = rows[-1][1]
            last_word = prev_line.rstrip("\n").split(" ")[-1]
            chopped = len(prev_line) >= width and len(last_word) >= (width - col) // 2
            joiner = "" if prev.endswith(" ") or chopped else " "
            rows[-1][1] = prev + joiner + l.lstrip(" ")
        prev_line = l
    names = [re.match(r"^  (?:-\w \[ )?(--[\w-]+)", lines[i]).group(1) for i in starts if first <= i < end]
    outside = [lines[i] for i in starts if not (first <= i < end)]
    if outside:
        raise SystemExit("check-docs: option lines outside the option block: %r" % outside)
    rows = [[n, d.strip()] for n, d in rows]
    return rows, names


def md_cell(s):
    return s.replace("|", "\\|")


def table_of(rows):
    out = ["| option | default | what it does |", "|---|---|---|"]
    for name, desc in rows:
        name = re.sub(r"^-\w \[ (--[\w-]+) \]", r"\1", name)
        m = re.fullmatch(r"(.*?) \(=(.*)\)", name)
        default = ""
        if m:
            name, default = m.group(1), m.group(2)
        out.append("| `%s` | %s | %s |" % (md_cell(name), "`%s`" % md_cell(default) if default else "",
                                            md_cell(desc)))
    return out


def cmd_programs(args):
    build = os.path.abspath(args.build)
    path = os.path.join(SRC, "docs", "programs.md")
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    problems = []
    seen = []
    while i < len(lines):
        m = re.fullmatch(r"<!-- options: (.+?) -->", lines[i].strip())
        if not m:
            out.append(lines[i])
            i += 1
            continue
        program = m.group(1)
        seen.append(program)
        out.append(lines[i])
        j = i + 1
        while j < len(lines) and lines[j].strip() != "<!-- end options -->":
            j += 1
        if j == len(lines):
            fail_usage("docs/programs.md:%d: <!-- options: %s --> has no <!-- end options -->" % (i + 1, program))
        rows, names = parse_help(help_text(build, program))
        table = table_of(rows)
        old = lines[i + 1:j]
        if old != table:
            diff = difflib.unified_diff(old, table, "docs/programs.md", program + " --help", lineterm="", n=0)
            problems.append("docs/programs.md:%d: the %s table is not its --help (check-docs.py programs BUILD "
                            "--write):\n%s" % (i + 1, program, "\n".join("    " + d[:160] for d in diff)))
        # Cross-check with an independent reading: every option line of --help has a row.
        in_table = set(re.findall(r"^\| `(--[\w-]+)", "\n".join(old), re.M))
        for n in names:
            if n not in in_table:
                problems.append("docs/programs.md: %s's table has no row for %s, which its --help lists" % (program, n))
        if len(rows) != len(names):
            problems.append("%s --help: %d option lines but %d rows parsed" % (program, len(names), len(rows)))
        out += table
        out.append(lines[j])
        i = j + 1
    for program in PROGRAM_HELP:
        if program not in seen:
            problems.append("docs/programs.md has no <!-- options: %s --> table" % program)
    if args.write:
        text = "\n".join(out)
        if text != "\n".join(lines):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("docs/programs.md: tables written from --help")
        return 0
    return report(problems, "docs/programs.md: %d option tables are their programs' --help" % len(seen))


# ---------------------------------------------------------------------------------------------
# Cross-references.

def slug(heading):
    """GitHub's anchor of a heading."""
    h = heading.strip().lower()
    h = h.replace("`", "")
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def headings(path):
    hs = []
    in_fence = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence:
            m = re.match(r"^#{1,6} (.*?)\s*$", line)
            if m:
                hs.append(m.group(1))
    return hs


def anchors(path):
    seen = {}
    out = set()
    for h in headings(path):
        s = slug(h)
        if s in seen:
            seen[s] += 1
            out.add("%s-%d" % (s, seen[s]))
        else:
            seen[s] = 0
            out.add(s)
    return out


def heading_text(h):
    return h.replace("`", "").strip()


def paragraph_leads(path):
    """A paragraph's bold lead (`**Placement's cost.**`, `- **When a job is bound**`) or its first
    words: named as headings are (a README of a folder is written in such paragraphs)."""
    leads = []
    prev_blank = True
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^(?:- )?\*\*(.+?)\*\*", line)
        if m:
            leads.append(heading_text(m.group(1)).rstrip(".:"))
        elif prev_blank and line.strip():
            leads.append(heading_text(line.strip()))
        prev_blank = not line.strip()
    return leads


def resolve(page, base_dirs):
    for d in base_dirs:
        p = os.path.normpath(os.path.join(d, page))
        if os.path.isfile(p):
            return p
    return None


KNOWN_SEEN = set()
REF = re.compile(r'((?:[\w./-]+/)?[\w.-]+\.md)(?:#([\w-]+))?(?:,? "([^"]+)")?')
# "the README" with no page: what it pointed at moved to docs/ (a public trace's own README is
# not meant: "the trace's README").
VAGUE = re.compile(r"(see the README|the README says|\(README[:,)]|\bin the README\b|(?<!trace's )\bREADME\))")
# Vague references in folders this check's author could not edit (another change owns them), each
# with the page it should name; listed so that they are seen, and failing once fixed (then drop the
# line) or when another appears.
KNOWN_VAGUE = {
}


def check_ref(where, text_dir, page, anchor, heading, problems):
    target = resolve(page, [text_dir, SRC, os.path.join(SRC, "docs")])
    if target is None:
        # a placeholder (PAGE.md) or a page of another project (a public trace's README.md) is
        # not ours to check
        if "/" not in page and page[:-3].isupper():
            return
        problems.append("%s: names %s, no such page" % (where, page))
        return
    if anchor and anchor not in anchors(target):
        problems.append("%s: names %s#%s, which has no such heading" % (where, page, anchor))
    if heading:
        hs = [heading_text(h) for h in headings(target)]
        want = heading_text(heading)
        leads = paragraph_leads(target)
        if not any(h == want or h.startswith(want) for h in hs) and \
                not any(l == want or re.match(re.escape(want) + r"\W", l) for l in leads):
            problems.append('%s: names %s, "%s", which has no such heading' % (where, page, heading))


def scan_text(where_prefix, text, text_dir, problems, md=False):
    for n, line in enumerate(text.split("\n"), 1):
        where = "%s:%d" % (where_prefix, n)
        if md:
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"(https?|mailto):", target):
                    continue
                path, _, anchor = target.partition("#")
                if not path:
                    path = None
                if path and not path.endswith(".md"):
                    if not os.path.exists(os.path.join(text_dir, path)):
                        problems.append("%s: link to '%s': no such file" % (where, target))
                    continue
                if path is None:
                    continue  # this page's own anchors: same_page_anchors
                check_ref(where, text_dir, path, anchor or None, None, problems)
        for m in REF.finditer(line):
            if md and re.search(r"\]\(" + re.escape(m.group(0)), line):
                continue
            if m.group(2) or m.group(3):
                check_ref(where, text_dir, m.group(1), m.group(2), m.group(3), problems)
        if VAGUE.search(line):
            known = [k for k in KNOWN_VAGUE if where_prefix == k[0] and k[1] in line]
            if known:
                KNOWN_SEEN.add(known[0])
            else:
                problems.append("%s: '%s' names no page: name the page and heading" % (where, VAGUE.search(line).group(1)))


def same_page_anchors(path, problems):
    text = open(path, encoding="utf-8").read()
    have = anchors(path)
    for n, line in enumerate(text.split("\n"), 1):
        for a in re.findall(r"\]\(#([\w-]+)\)", line):
            if a not in have:
                problems.append("%s:%d: link to '#%s': no such heading on this page" % (os.path.relpath(path, SRC), n, a))


def cmd_refs(args):
    problems = []
    md_files = [os.path.join(SRC, "README.md")]
    for root, dirs, files in os.walk(SRC):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "results") and
                   not d.startswith("build")]
        rel = os.path.relpath(root, SRC)
        for f in files:
            p = os.path.join(root, f)
            if f.endswith(".md") and rel != ".":
                md_files.append(p)
            elif f.endswith((".cpp", ".h", ".py", ".sh", ".cu")) and p != os.path.abspath(__file__):
                text = open(p, encoding="utf-8", errors="replace").read()
                # a C++ string continued on the next line ("... see the " "README") read as one
                text = re.sub(r'"\s*\n\s*"', "", text)
                scan_text(os.path.relpath(p, SRC), text, root, problems)
    for p in md_files:
        scan_text(os.path.relpath(p, SRC), open(p, encoding="utf-8").read(), os.path.dirname(p), problems, md=True)
        same_page_anchors(p, problems)
    if args.build:
        for program in PROGRAM_HELP:
            text = re.sub(r"\s*\n {4,}", " ", help_text(os.path.abspath(args.build), program))
            scan_text(program + " --help", text, SRC, problems)
    for k, page in sorted(KNOWN_VAGUE.items()):
        if k in KNOWN_SEEN:
            print("known, to fix: %s: '%s' should name %s" % (k[0], k[1], page))
        else:
            problems.append("%s: '%s' is gone: drop it from KNOWN_VAGUE" % k)
    return report(problems, "references: every page and heading named exists (%d pages read)" % len(md_files))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("build")
    r.add_argument("--long", action="store_true")
    r.add_argument("--page")
    r.add_argument("--list", action="store_true")
    r.add_argument("--public", metavar="DIR")
    r.add_argument("--timeout", type=float, default=1800)
    p = sub.add_parser("programs")
    p.add_argument("build")
    p.add_argument("--write", action="store_true")
    f = sub.add_parser("refs")
    f.add_argument("build", nargs="?")
    args = ap.parse_args()
    if args.cmd == "run":
        return cmd_run(args)
    if args.cmd == "programs":
        return cmd_programs(args)
    return cmd_refs(args)


if __name__ == "__main__":
    sys.exit(main())
