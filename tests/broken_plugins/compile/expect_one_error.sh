#!/bin/sh
# Builds one deliberately wrong plugin source; passes when the build fails with exactly one
# compiler error and that error carries the expected static_assert message.
# usage: expect_one_error.sh <build dir> <target> <message>
out=$(cmake --build "$1" --target "$2" 2>&1) && { echo "$2 compiled, expected a static_assert"; exit 1; }
errors=$(printf '%s\n' "$out" | grep -c 'error:')
printf '%s\n' "$out" | grep -F -q "$3" || { printf '%s\n' "$out"; echo "no message: $3"; exit 1; }
[ "$errors" -eq 1 ] || { printf '%s\n' "$out"; echo "$errors errors, expected 1"; exit 1; }
echo "$2: one error, with the message"
