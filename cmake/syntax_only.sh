#!/bin/sh
# Compiler launcher for sources compiled only to prove they stay valid C++
# (the analyzer cases): the compiler checks them with -fsyntax-only, which
# skips code generation, and the object file the build tool expects is left
# empty (nothing links it).
set -e
object=
previous=
for argument in "$@"; do
  [ "$previous" = "-o" ] && object=$argument
  previous=$argument
done
"$@" -fsyntax-only
[ -z "$object" ] || : > "$object"
