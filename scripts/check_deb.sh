#!/usr/bin/env bash
# The Debian package on a fresh Debian 12: `cpack -G DEB` in BUILD_DIR, a
# minimal bookworm root (debootstrap), `apt-get install ./dtype-lint_*.deb`
# there with its Depends alone (no Recommends), then the installed tool runs.
# Needs root and Debian's mirror: without them it says so in one line and fails.
# The root is deleted at the end, whatever happened.
# Usage: scripts/check_deb.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
mirror=http://deb.debian.org/debian
fail() {
  echo "check_deb: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "cannot run: needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || fail "cannot run: no debootstrap (scripts/setup.sh installs it)"

work=$(mktemp -d /var/tmp/dtype-lint-deb.XXXXXX)
root=$work/root
cleanup() {
  # Unmount what debootstrap or this script left mounted in the root, deepest
  # first; never delete through a mount.
  awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r |
    while read -r mount; do umount -l "$mount"; done
  if awk -v r="$root" 'index($2, r) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
    echo "check_deb: $work left behind: still mounted" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

(cd "$build" && cpack -G DEB -B "$work/packages") >"$work/cpack.log" 2>&1 || fail "cpack failed: $(tail -n1 "$work/cpack.log")"
debs=("$work"/packages/dtype-lint_*_*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made no dtype-lint_*.deb"
deb=${debs[0]}
depends=$(dpkg-deb -f "$deb" Depends)
echo "check_deb: $(basename "$deb"): Depends: $depends"
# LibTorch comes only with the adapter's own package.
! grep -q torch <<<"$depends" || fail "dtype-lint depends on LibTorch: $depends"

debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  fail "cannot run: no Debian 12 root from $mirror (no network?): $(tail -n1 "$work/debootstrap.log")"
cp "$deb" "$root/tmp/"
[ ! -e /etc/resolv.conf ] || cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"  # `dtype-lint run` finds its preload through /proc/self/exe
unset LD_PRELOAD DTYPE_LINT_PRELOAD DTYPE_LINT_ADAPTER DTYPE_LINT_CACHE_DIR
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
in_root apt-get update -qq >"$work/apt.log" 2>&1 || fail "apt-get update in the root failed: $(tail -n1 "$work/apt.log")"
in_root apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" >"$work/apt.log" 2>&1 ||
  fail "apt-get install of $(basename "$deb") failed: $(tail -n1 "$work/apt.log")"

# Whole outputs first: grep -q would end the pipe early.
out=$(in_root dtype-lint --version) && grep -q '^dtype-lint ' <<<"$out" || fail "dtype-lint --version failed"
out=$(in_root dtype-lint --list-rules) && grep -q '^DL101 ' <<<"$out" || fail "dtype-lint --list-rules failed"
out=$(in_root dtype-lint --explain DL101) && grep -q '^# DL101' <<<"$out" || fail "dtype-lint --explain DL101 failed"
# The preload and what it links load (ld.so would only warn, and run the
# program): nothing is said but that /bin/true has no LibTorch to check.
out=$(in_root dtype-lint run -- /bin/true 2>&1) &&
  ! grep -v '^dtype-lint: note: the hooks attached to no process of this run' <<<"$out" | grep -q . ||
  fail "dtype-lint run -- /bin/true: $out"
# No LibTorch headers here, so no findings to expect: a file that includes
# clang's builtin <stddef.h> parses without errors (libclang-common's headers).
printf '#include <stddef.h>\nstruct S { int a; double b; };\nint main() { return int(offsetof(S, b) - sizeof(double)); }\n' \
  >"$root/tmp/plain.cpp"
out=$(in_root dtype-lint /tmp/plain.cpp 2>/dev/null) && [ -z "$out" ] || fail "dtype-lint /tmp/plain.cpp: $out"
echo "check_deb: $(basename "$deb") installs and runs on a fresh Debian 12"
