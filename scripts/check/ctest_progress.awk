# Condenses ctest's output for scripts/test.sh (the whole of it goes to BUILD_DIR/ctest.log):
#   - "Start N: NAME" lines, passed and skipped tests are not printed; a line every 250 finished
#     tests shows progress (how many passed and were skipped so far); the skips are counted by
#     reason in test.sh's summary (scripts/check/ctest_summary.py), one line per reason;
#   - ctest's "N% tests passed" line, which counts a skip as a pass, and its closing list of the
#     tests that did not run are dropped: the summary leads with the true counts;
#   - a failure is printed whole (its result line and its output), as are ctest's other closing
#     lines.
#
#   ctest ... | awk -f scripts/check/ctest_progress.awk
function progress() {
  if ((passed + skipped) % 250 == 0) {
    print "  ... " passed + skipped " tests done: " passed " passed, " skipped " skipped"
    fflush()
  }
}
/^ +Start +[0-9]+: / { next }
/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: .* +Passed +[0-9.]+ sec$/ { passed++; progress(); next }
/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: .*\*\*\*Skipped +[0-9.]+ sec$/ { skipped++; progress(); next }
/^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+$/ { next }
/^The following tests did not run:/ { skip_list = 1; next }
skip_list && /^[ \t]+[0-9]+ - / { next }
{ skip_list = 0; print; fflush() }
