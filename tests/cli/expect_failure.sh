#!/bin/sh
# Runs a command that must fail: exits 0 only if the command exited non-zero. Its output
# is passed through for ctest's PASS_REGULAR_EXPRESSION to check the message.
"$@" 2>&1
status=$?
if [ "$status" -eq 0 ]; then
  echo "expect_failure: the command succeeded but should have failed"
  exit 1
fi
echo "expect_failure: exit status $status"
exit 0
