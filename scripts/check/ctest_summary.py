#!/usr/bin/env python3
"""Summarises a ctest JUnit file (ctest --output-junit FILE): counts, and why tests were skipped.

    scripts/check/ctest_summary.py FILE            for people (scripts/test.sh):
        tests: 700 total, 122 passed, 0 failed, 578 skipped
        skipped, by reason:
          560  no usable CUDA device
           18  MNIST not found in data/mnist (...)
    scripts/check/ctest_summary.py --lines FILE    for scripts (scripts/check/gpu_check.sh): the line
        "TOTAL PASSED FAILED SKIPPED", then "failed NAME" per failure, "skipped NAME" per skip

A skip's reason is the message GoogleTest prints under "...: Skipped" (GTEST_SKIP() << reason);
for a script test that skips by its exit status (SKIP_RETURN_CODE), the line it prints starting
"SKIP: "; for a test ctest did not run at all, ctest's own message (e.g. "Disabled").
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

# GoogleTest's "file:line: Skipped" line, then the reason on the lines up to "[  SKIPPED ]".
GTEST_SKIP = re.compile(r": Skipped\n(.*?)\n?\[  SKIPPED \]", re.S)
# A script's own line, e.g. "SKIP: PyTorch is not installed for python3".
SCRIPT_SKIP = re.compile(r"^SKIP: (.+)$", re.M)


def outcome(case):
    """'failed', 'skipped' or 'passed', as gpu_check.sh has always counted them."""
    status = case.get("status", "")
    if case.find("failure") is not None or status == "fail":
        return "failed"
    if case.find("skipped") is not None or status in ("notrun", "disabled"):
        return "skipped"
    return "passed"


def skip_reason(case):
    out = case.findtext("system-out") or ""
    match = GTEST_SKIP.search(out)
    if match and match.group(1).strip():
        return " ".join(match.group(1).split())
    match = SCRIPT_SKIP.search(out)
    if match:
        return " ".join(match.group(1).split())
    skipped = case.find("skipped")
    message = skipped.get("message", "") if skipped is not None else ""
    if message and message != "SKIP_REGULAR_EXPRESSION_MATCHED":
        return message
    return "no reason given"


def main(argv):
    lines = argv[1:2] == ["--lines"]
    paths = argv[2:] if lines else argv[1:]
    if len(paths) != 1:
        sys.exit("usage: scripts/check/ctest_summary.py [--lines] JUNIT_FILE")
    try:
        cases = list(ET.parse(paths[0]).getroot().iter("testcase"))
    except (OSError, ET.ParseError) as e:
        sys.exit(f"ctest_summary.py: cannot read {paths[0]}: {e}")
    by_outcome = collections.defaultdict(list)
    for case in cases:
        by_outcome[outcome(case)].append(case)
    passed, failed, skipped = (by_outcome[k] for k in ("passed", "failed", "skipped"))
    if lines:
        print(len(cases), len(passed), len(failed), len(skipped))
        for kind, group in (("failed", failed), ("skipped", skipped)):
            for case in group:
                print(kind, case.get("name", "?"))
        return
    print(f"tests: {len(cases)} total, {len(passed)} passed, {len(failed)} failed, "
          f"{len(skipped)} skipped")
    for case in failed:
        print(f"failed: {case.get('name', '?')}")
    if skipped:
        reasons = collections.Counter(skip_reason(case) for case in skipped)
        width = len(str(reasons.most_common(1)[0][1]))
        print("skipped, by reason:")
        for reason, n in reasons.most_common():
            print(f"  {n:>{width}}  {reason}")


if __name__ == "__main__":
    main(sys.argv)
