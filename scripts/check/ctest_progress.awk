# Condenses ctest's output for scripts/test.sh (the whole of it goes to BUILD_DIR/ctest.log):
#   - "Start N: NAME" lines and passed tests are not printed; a line every 250 passes shows
#     progress;
#   - a skipped test is named once, on its own result line (ctest's closing list of "tests that
#     did not run" repeats them all, and is dropped);
#   - a failure is printed whole (its result line and its output), as are ctest's closing lines.
#
#   ctest ... | awk -f scripts/check/ctest_progress.awk
/^ +Start +[0-9]+: / { next }
/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: .* +Passed +[0-9.]+ sec$/ {
  passed++
  if (passed % 250 == 0) { print "  ... " passed " tests passed so far"; fflush() }
  next
}
/^The following tests did not run:/ { skip_list = 1; next }
skip_list && /^[ \t]+[0-9]+ - / { next }
{ skip_list = 0; print; fflush() }
