#!/usr/bin/env bash
# Tests the Debian packages build/deb/edgetap_<version>_<arch>.deb,
# edgetap-data_<version>_all.deb and, where build-deb.sh made it,
# edgetap-cuda_<version>_<arch>.deb (the CUDA engine plugin):
#   packaging/test-package.sh           test the package packaging/build-deb.sh made
#   packaging/test-package.sh --build   build it first (a few minutes on 2 cores)
#   packaging/test-package.sh --ctest   as registered in ctest (label "package"): skipped
#                                       (exit 77) unless EDGETAP_PACKAGE_TEST=1, else --build
#
# Checks the control fields, the file list, the conffiles, the maintainer
# scripts, lintian, and the unit as installed (systemd-analyze verify); then
# installs the package into a throwaway root with dpkg --root (maintainer
# scripts run outside a chroot with DPKG_ROOT set, systemctl shimmed), checks
# the edgetap user, the enabled unit and the conffile, reinstalls over a local
# edit of the conffile, removes and purges. Work files: build/pkg-test/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

case "${1:-}" in
  "") build=no ;;
  --build) build=yes ;;
  --ctest)
    if [ "${EDGETAP_PACKAGE_TEST:-}" != 1 ]; then
      echo "test-package: skipped: building the package takes minutes; scripts/test.sh runs it" \
           "(or: EDGETAP_PACKAGE_TEST=1 ctest --preset cpu -L package)"
      exit 77
    fi
    build=yes ;;
  *) echo "usage: packaging/test-package.sh [--build | --ctest]" >&2; exit 2 ;;
esac

for tool in dpkg-buildpackage dh lintian help2man systemd-analyze systemd-sysusers; do
  command -v "$tool" >/dev/null ||
    { echo "test-package: $tool missing; run scripts/install-deps.sh" >&2; exit 1; }
done

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
section() { echo; echo "== $*"; }

version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=build/deb/edgetap_${version}_${arch}.deb
data_deb=build/deb/edgetap-data_${version}_all.deb
cuda_deb=build/deb/edgetap-cuda_${version}_${arch}.deb
dev_deb=build/deb/edgetap-dev_${version}_all.deb
python_deb=build/deb/python3-edgetap_${version}_all.deb
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugin=/usr/lib/$multiarch/edgetap/libedgetap-cuda.so
work=$root/build/pkg-test
[ "$build" = yes ] && packaging/build-deb.sh
for d in "$deb" "$data_deb" "$dev_deb" "$python_deb"; do
  [ -f "$d" ] || { echo "test-package: $d missing; run packaging/build-deb.sh (or pass --build)" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
have_cuda_deb=no
if [ -f "$cuda_deb" ]; then
  have_cuda_deb=yes
else
  echo "test-package: $cuda_deb not built (no CUDA toolkit where build-deb.sh ran): the CUDA package's checks are skipped"
fi

section "build dependencies: every library install-deps.sh builds with is in Build-Depends"
# Not needed in Build-Depends: libraries only the test suite links against (the
# package builds without tests) or the fuzzers (libclang-rt-14-dev), and dpkg-dev
# (build-essential brings it).
not_build_depends="libgtest-dev libgmock-dev libgstrtspserver-1.0-dev libclang-rt-14-dev dpkg-dev"
build_depends=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' packaging/debian/control)
for p in $(sed -n '/^BUILD_PACKAGES=(/,/^)/p' scripts/install-deps.sh | tr -d '()' | sed 's/BUILD_PACKAGES=//'); do
  case "$p" in *-dev) ;; *) continue ;; esac
  case " $not_build_depends " in *" $p "*) continue ;; esac
  grep -Eq "^ $p( |,)" <<<"$build_depends" ||
    fail "scripts/install-deps.sh installs $p but packaging/debian/control does not Build-Depend on it"
done
ok "Build-Depends checked against scripts/install-deps.sh"

section "control fields"
field() { dpkg-deb --field "${2:-$deb}" "$1"; }
expect_field() {  # expect_field NAME VALUE [DEB]
  local got; got=$(field "$1" "${3:-$deb}")
  [ "$got" = "$2" ] && ok "${3:+$(basename "$3"): }$1: $got" || fail "${3:+$(basename "$3"): }$1 is '$got', expected '$2'"
}
expect_field Package edgetap
expect_field Version "$version"
expect_field Architecture "$arch"
expect_field Section video
expect_field Priority optional
[ -n "$(field Maintainer)" ] && ok "Maintainer: $(field Maintainer)" || fail "no Maintainer"
[ -n "$(field Description)" ] && ok "Description: $(field Description | head -n 1)" || fail "no Description"
expect_field Package edgetap-data "$data_deb"
expect_field Version "$version" "$data_deb"
expect_field Architecture all "$data_deb"
expect_field Multi-Arch foreign "$data_deb"
depends=$(field Depends | tr ',' '\n' | sed 's/^ *//')
for d in "edgetap-data (= $version)" gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav \
         'systemd | systemd-standalone-sysusers | systemd-sysusers'; do
  grep -Fxq "$d" <<<"$depends" && ok "Depends: $d" || fail "Depends lacks '$d'"
done
for lib in libc6 libgstreamer1.0-0 libopencv-core406 libyaml-cpp0.7; do   # from ${shlibs:Depends}
  grep -q "^$lib\b" <<<"$depends" && ok "Depends: $lib (shlibs)" || fail "Depends lacks $lib: \${shlibs:Depends} not filled?"
done

if [ "$have_cuda_deb" = yes ]; then
  expect_field Package edgetap-cuda "$cuda_deb"
  expect_field Version "$version" "$cuda_deb"
  expect_field Architecture "$arch" "$cuda_deb"
  cuda_depends=$(field Depends "$cuda_deb" | tr ',' '\n' | sed 's/^ *//')
  # NVIDIA's CUDA apt repository's names for the CUDA 13.0 runtime, cuBLAS and cuDNN 9 (packaging/README.md).
  for d in "edgetap (= $version)" cuda-cudart-13-0 libcublas-13-0 libcudnn9-cuda-13; do
    grep -Fxq "$d" <<<"$cuda_depends" && ok "edgetap-cuda Depends: $d" || fail "edgetap-cuda Depends lacks '$d'"
  done
  grep -q '^libc6\b' <<<"$cuda_depends" && ok "edgetap-cuda Depends: libc6 (shlibs)" ||
    fail "edgetap-cuda Depends lacks libc6: \${shlibs:Depends} not filled?"
fi
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/edgetapd >"$work/edgetapd.bin"
if objdump -p "$work/edgetapd.bin" | grep -E 'NEEDED +lib(cudart|cublas|cudnn)' >"$work/cuda-needed.txt"; then
  fail "edgetapd links CUDA libraries itself: $(tr '\n' ' ' <"$work/cuda-needed.txt")"
else
  ok "edgetapd links no CUDA library (the CUDA engine is a plugin)"
fi

section "file lists"
dpkg-deb --contents "$deb" >"$work/contents.txt"
dpkg-deb --contents "$data_deb" >"$work/contents-data.txt"
# check_files CONTENTS FILES...: the package holds exactly FILES (directories aside)
check_files() {
  local contents=$1 f; shift
  local listed; listed=$(awk '{ sub(/^\./, "", $6); print $6 }' "$contents" | grep -v '/$' | sort)
  for f in "$@"; do
    grep -Fxq "$f" <<<"$listed" && ok "$f" || fail "$(basename "$contents" .txt): no $f"
  done
  # Anything else is new: check it belongs in the package, then add it in $0.
  while read -r f; do
    printf '%s\n' "$@" | grep -Fxq "$f" || fail "unexpected file $f in $(basename "$contents" .txt) (if it belongs, add it in $0)"
  done <<<"$listed"
}
check_files "$work/contents.txt" \
  /usr/bin/edgetapd /usr/bin/edgetap /etc/edgetap/edgetap.yaml \
  /lib/systemd/system/edgetapd.service /usr/lib/sysusers.d/edgetap.conf \
  /usr/share/man/man8/edgetapd.8.gz /usr/share/man/man1/edgetap.1.gz \
  /usr/share/doc/edgetap/copyright /usr/share/doc/edgetap/changelog.gz /usr/share/lintian/overrides/edgetap
check_files "$work/contents-data.txt" \
  /usr/share/edgetap/models/edgetap-small.safetensors /usr/share/edgetap/models/edgetap-small.json \
  /usr/share/edgetap/models/edgetap-large.safetensors /usr/share/edgetap/models/edgetap-large.json \
  /usr/share/edgetap/demo/vtest-pedestrians.avi /usr/share/edgetap/demo/README.md \
  $(cd schema && printf '/usr/share/edgetap/schema/%s ' *.schema.json) \
  /usr/share/doc/edgetap-data/copyright /usr/share/doc/edgetap-data/changelog.gz \
  /usr/share/lintian/overrides/edgetap-data
dpkg-deb --contents "$dev_deb" >"$work/contents-dev.txt"
check_files "$work/contents-dev.txt" /usr/include/edgetap/client.hpp /usr/share/pkgconfig/edgetap-client.pc \
  /usr/share/doc/edgetap-dev/copyright /usr/share/doc/edgetap-dev/changelog.gz
dpkg-deb --contents "$python_deb" >"$work/contents-python.txt"
check_files "$work/contents-python.txt" /usr/lib/python3/dist-packages/edgetap/__init__.py \
  /usr/lib/python3/dist-packages/edgetap/client.py \
  /usr/share/doc/python3-edgetap/copyright /usr/share/doc/python3-edgetap/changelog.gz
if [ "$have_cuda_deb" = yes ]; then
  dpkg-deb --contents "$cuda_deb" >"$work/contents-cuda.txt"
  check_files "$work/contents-cuda.txt" "$plugin" \
    /usr/share/doc/edgetap-cuda/copyright /usr/share/doc/edgetap-cuda/changelog.gz \
    /usr/share/lintian/overrides/edgetap-cuda
fi
for b in /usr/bin/edgetapd /usr/bin/edgetap; do
  grep -q "^-rwxr-xr-x root/root .* \.$b\$" "$work/contents.txt" && ok "$b is 0755 root:root" || fail "$b is not 0755 root:root"
done

section "no build path in the programs"
# The packages are built in build/deb/src/edgetap-<version>/ (obj-<triplet>/ inside): no
# string of the programs may name it or this checkout (the data-directory fallback is
# compiled in only with EDGETAP_SOURCE_TREE_DATA, which debian/rules turns off).
dpkg-deb --extract "$deb" "$work/extracted"
for b in usr/bin/edgetapd usr/bin/edgetap; do
  leaks=$(strings "$work/extracted/$b" | grep -E "build/deb/src|obj-$(dpkg-architecture -qDEB_HOST_GNU_TYPE)|$root" || true)
  [ -z "$leaks" ] && ok "/$b names no build directory" || fail "/$b embeds build paths: $(head -3 <<<"$leaks")"
done
grep -q '/usr/share/edgetap/demo/vtest-pedestrians.avi' <<<"$(strings "$work/extracted/usr/bin/edgetap")" &&
  ok "edgetap looks for the demo clip in /usr/share/edgetap" || fail "edgetap does not name /usr/share/edgetap/demo"

section "conffiles and maintainer scripts"
dpkg-deb --control "$deb" "$work/control"
dpkg-deb --control "$data_deb" "$work/control-data"
if ls "$work/control-data" | grep -Eqv '^(control|md5sums)$'; then
  fail "edgetap-data has more than control and md5sums: $(ls "$work/control-data" | tr '\n' ' ')"
else
  ok "edgetap-data: no maintainer scripts, no conffiles"
fi
if [ "$(cat "$work/control/conffiles")" = /etc/edgetap/edgetap.yaml ]; then
  ok "conffiles: /etc/edgetap/edgetap.yaml"
else
  fail "conffiles is '$(tr '\n' ' ' <"$work/control/conffiles")', expected /etc/edgetap/edgetap.yaml"
fi
for s in preinst postinst prerm postrm; do
  [ -f "$work/control/$s" ] || continue
  sh -n "$work/control/$s" && ok "$s: valid sh" || fail "$s: syntax error"
  head -n 2 "$work/control/$s" | grep -q '^set -e$' || fail "$s does not set -e"
done
postinst=$work/control/postinst
grep -Fq 'systemd-sysusers ${DPKG_ROOT:+--root="$DPKG_ROOT"} edgetap.conf' "$postinst" &&
  ok "postinst creates the edgetap user (systemd-sysusers)" || fail "postinst does not run systemd-sysusers edgetap.conf"
grep -Fq "deb-systemd-helper enable 'edgetapd.service'" "$postinst" &&
  ok "postinst enables edgetapd.service" || fail "postinst does not enable edgetapd.service"
# Every systemctl and deb-systemd-invoke call must sit inside an "if" that
# tests -d /run/systemd/system, so the scripts work where systemd is not PID 1.
for s in postinst prerm postrm; do
  [ -f "$work/control/$s" ] || continue
  bad=$(awk '/^[[:space:]]*if .*\[ -d \/run\/systemd\/system \]/ { depth = 1; next }
             depth && /^[[:space:]]*if / { depth++ }
             depth && /^[[:space:]]*fi$/ { depth--; next }
             !depth && /(systemctl|deb-systemd-invoke) / { print FILENAME ":" FNR ": " $0 }' "$work/control/$s")
  [ -z "$bad" ] && ok "$s: systemctl only when systemd runs" || fail "unguarded systemctl: $bad"
done

section "lintian"
changes=build/deb/edgetap_${version}_${arch}.changes
[ -f "$changes" ] || { fail "$changes missing"; changes="$deb $data_deb"; }
# Tags at every level fail, info and pedantic included, unless overridden in
# packaging/debian/*.lintian-overrides with the reason (see packaging/README.md).
# The one exception: edgetap-cuda's spelling override covers the kernels' machine
# code, whose bytes move with every kernel change, so it may go unused.
# shellcheck disable=SC2086 # $changes may be two files
lintian_rc=0
lintian --allow-root --display-info --pedantic --fail-on none $changes >"$work/lintian.txt" 2>&1 || lintian_rc=$?
tags=$(grep '^[EWIP]: ' "$work/lintian.txt" |
  grep -v '^I: edgetap-cuda: unused-override spelling-error-in-binary ' || true)
if [ "$lintian_rc" -eq 0 ] && [ -z "$tags" ]; then
  ok "lintian: clean (overrides: $(cat packaging/debian/*.lintian-overrides | grep -c '^edgetap'))"
else
  cat "$work/lintian.txt" >&2
  fail "lintian reports tags (exit $lintian_rc)"
fi

section "install into a throwaway root (dpkg --root, scripts outside a chroot)"
R=$work/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers" "$R/etc"
touch "$R/var/lib/dpkg/status" "$R/var/lib/dpkg/available"
# A Debian system's static users and groups (video is 44), from base-passwd.
cp /usr/share/base-passwd/passwd.master "$R/etc/passwd"
cp /usr/share/base-passwd/group.master "$R/etc/group"
# systemctl and deb-systemd-invoke are shimmed: they record their calls and
# touch nothing, so a developer machine that runs systemd is left alone.
mkdir -p "$work/shims"
for t in systemctl deb-systemd-invoke; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/systemd-calls.txt"\n' "$t" "$work" >"$work/shims/$t"
  chmod +x "$work/shims/$t"
done
rootdpkg() {
  PATH=$work/shims:$PATH dpkg --root="$R" --force-script-chrootless --force-depends \
    --force-confdef --force-confold --log="$work/dpkg.log" "$@" >>"$work/dpkg-output.txt" 2>&1 ||
    { cat "$work/dpkg-output.txt" >&2; fail "dpkg $*"; return 1; }
}
status() { dpkg-query --admindir="$R/var/lib/dpkg" --show --showformat='${Status}' edgetap 2>/dev/null || true; }
wants=$R/etc/systemd/system/multi-user.target.wants/edgetapd.service

# What edgetapd.service relies on, run against the installed daemon and the
# shipped configuration (its sockets moved to a scratch folder, metrics off):
# Type=notify (READY=1, WATCHDOG=1 with WatchdogSec=), ExecReload= sends SIGHUP
# (RELOADING=1, READY=1 again, the daemon lives on), stop by SIGTERM
# (STOPPING=1, exit 0), RestartPreventExitStatus=78 (a bad file exits 78).
service_contract() {
  # edgetapd refuses to run as root unless told to (the unit runs it as edgetap).
  local as_root=(); [ "$(id -u)" -ne 0 ] || as_root=(--allow-root)
  local svc=$work/service daemon_pid listener_pid status=0 before=$failures
  mkdir -p "$svc"
  sed -e "s#/run/edgetap/#$svc/#g" -e 's#^\(  listen:\) .*#\1 ""#' "$R/etc/edgetap/edgetap.yaml" >"$svc/edgetap.yaml"
  python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(4096).decode(errors="replace").replace("\n", " ") + "\n")
' "$svc/notify.sock" "$svc/notify.txt" &
  listener_pid=$!
  for _ in $(seq 50); do [ -S "$svc/notify.sock" ] && break; sleep 0.1; done
  touch "$svc/notify.txt"
  NOTIFY_SOCKET=$svc/notify.sock WATCHDOG_USEC=2000000 \
    "$R/usr/bin/edgetapd" "${as_root[@]}" --config "$svc/edgetap.yaml" >"$svc/daemon.log" 2>&1 &
  daemon_pid=$!
  # notified PATTERN SECONDS [COUNT]: waits until COUNT (1) notifications match
  notified() {
    local _
    for _ in $(seq $(($2 * 10))); do
      [ "$(grep -c -- "$1" "$svc/notify.txt")" -ge "${3:-1}" ] && return 0
      kill -0 "$daemon_pid" 2>/dev/null || break
      sleep 0.1
    done
    [ "$(grep -c -- "$1" "$svc/notify.txt")" -ge "${3:-1}" ]
  }
  notified READY=1 30 && ok "READY=1 after start" || fail "no READY=1 within 30 s"
  grep -q "STATUS=no cameras configured: add one under 'cameras:' in $svc/edgetap.yaml" "$svc/notify.txt" &&
    ok "the shipped configuration runs no camera and STATUS= says what to edit" ||
    fail "STATUS= does not say that no camera is configured"
  notified WATCHDOG=1 5 && ok "WATCHDOG=1 pings" || fail "no WATCHDOG=1 with WATCHDOG_USEC=2 s"
  kill -HUP "$daemon_pid" 2>/dev/null || true
  notified RELOADING=1 10 && notified READY=1 10 2 && ok "SIGHUP: RELOADING=1, then READY=1" ||
    fail "SIGHUP: no RELOADING=1 and READY=1"
  sleep 1
  if kill -0 "$daemon_pid" 2>/dev/null; then
    ok "alive after SIGHUP (systemctl reload)"
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || status=$?
    [ "$status" -eq 0 ] && ok "SIGTERM: exit 0" || fail "SIGTERM: exit status $status"
    notified STOPPING=1 1 && ok "STOPPING=1" || fail "no STOPPING=1"
  else
    wait "$daemon_pid" || status=$?
    fail "edgetapd died on SIGHUP (exit status $status): systemctl reload would stop the service, and" \
         "Restart=on-failure does not restart after SIGHUP. Does a thread started before main() leave it unblocked?"
  fi
  kill "$listener_pid" 2>/dev/null || true
  wait "$listener_pid" 2>/dev/null || true
  if [ "$failures" -ne "$before" ]; then
    echo "daemon log (${svc#"$root"/}/daemon.log):" >&2; tail -n 20 "$svc/daemon.log" >&2
    echo "notifications:" >&2; cat "$svc/notify.txt" >&2
  fi

  printf 'version: 1\ncameras: []\nno_such_key: 1\n' >"$svc/bad.yaml"
  status=0
  timeout 20 "$R/usr/bin/edgetapd" "${as_root[@]}" --config "$svc/bad.yaml" >"$svc/bad.log" 2>&1 || status=$?
  [ "$status" -eq 78 ] && ok "a bad configuration exits 78" || fail "a bad configuration exits $status, not 78"
}

if rootdpkg --install "$data_deb" "$deb" "$dev_deb" "$python_deb"; then
  [ "$(status)" = "install ok installed" ] && ok "installed" || fail "status after install: $(status)"
  dpkg-query --admindir="$R/var/lib/dpkg" --show --showformat='${Conffiles}\n' edgetap | grep -q '^ /etc/edgetap/edgetap.yaml ' &&
    ok "dpkg registers /etc/edgetap/edgetap.yaml as a conffile" || fail "conffile not registered"
  grep -q '^edgetap:x:[0-9]*:[0-9]*:[^:]*:/:/usr/sbin/nologin$' "$R/etc/passwd" &&
    ok "user: $(grep '^edgetap:' "$R/etc/passwd")" || fail "no system user edgetap: $(grep edgetap "$R/etc/passwd" || true)"
  grep -q '^edgetap:' "$R/etc/group" && ok "group edgetap" || fail "no group edgetap"
  for g in video render; do
    grep -Eq "^$g:[^:]*:[0-9]+:(.*,)?edgetap(,|$)" "$R/etc/group" && ok "edgetap is in $(grep "^$g:" "$R/etc/group")" ||
      fail "edgetap is not in group $g"
  done
  [ "$(readlink "$wants" || true)" = /lib/systemd/system/edgetapd.service ] &&
    ok "enabled: multi-user.target.wants/edgetapd.service" || fail "edgetapd.service is not enabled"
  if [ ! -d /run/systemd/system ]; then
    [ ! -s "$work/systemd-calls.txt" ] && ok "no systemctl calls without systemd" ||
      fail "systemctl called without systemd: $(cat "$work/systemd-calls.txt")"
  fi
  cmp -s "$R/lib/systemd/system/edgetapd.service" packaging/systemd/edgetapd.service &&
    ok "the installed unit is packaging/systemd/edgetapd.service" || fail "the installed unit differs from packaging/systemd/edgetapd.service"
  for m in edgetap-small.safetensors edgetap-small.json edgetap-large.safetensors edgetap-large.json; do
    cmp -s "$R/usr/share/edgetap/models/$m" "models/$m" && ok "the installed model file $m is models/$m" ||
      fail "/usr/share/edgetap/models/$m differs from models/$m"
  done
  cmp -s "$R/usr/lib/sysusers.d/edgetap.conf" packaging/systemd/edgetap.sysusers &&
    ok "the installed sysusers.d/edgetap.conf is packaging/systemd/edgetap.sysusers" || fail "sysusers.d/edgetap.conf differs"

  # Without edgetap-cuda the programs say so and run on the CPU.
  "$R/usr/bin/edgetap" --version >"$work/version-cpu.txt" 2>&1
  grep -q '^cuda engine: the CUDA engine is not installed (package edgetap-cuda' "$work/version-cpu.txt" &&
    ok "without edgetap-cuda: $(sed -n 2p "$work/version-cpu.txt" | cut -c1-80)..." ||
    fail "edgetap --version without edgetap-cuda: $(cat "$work/version-cpu.txt")"
  if [ "$have_cuda_deb" = yes ] && rootdpkg --install "$cuda_deb"; then
    "$R/usr/bin/edgetap" --version >"$work/version-cuda.txt" 2>&1
    if grep -Fq "$R$plugin" "$work/version-cuda.txt"; then
      ok "edgetap finds the installed plugin: $(sed -n 2p "$work/version-cuda.txt")"
    else
      fail "edgetap does not find $R$plugin: $(cat "$work/version-cuda.txt")"
    fi
  fi

  # The installed programs run with this system's libraries.
  [ "$("$R/usr/bin/edgetapd" --version)" = "edgetapd $version" ] && ok "edgetapd --version: edgetapd $version" ||
    fail "edgetapd --version says '$("$R/usr/bin/edgetapd" --version 2>&1)'"
  "$R/usr/bin/edgetap" check-config "$R/etc/edgetap/edgetap.yaml" >"$work/check-config.txt" 2>&1 &&
    ok "edgetap check-config accepts the shipped /etc/edgetap/edgetap.yaml" ||
    { cat "$work/check-config.txt" >&2; fail "the shipped configuration does not validate"; }
  packaging/verify-unit.sh "$R/usr/bin/edgetapd" "$R/lib/systemd/system/edgetapd.service" "$R/usr/share/man" \
    >"$work/verify-unit.txt" 2>&1 && ok "installed unit: $(paste -sd';' "$work/verify-unit.txt" | sed 's/verify-unit: //g')" ||
    { cat "$work/verify-unit.txt" >&2; fail "the installed unit does not verify"; }

  section "the installed clients"
  printf '#include <edgetap/client.hpp>\nint main() { edgetap::client::ControlClient c("/nonexistent"); }\n' >"$work/client.cpp"
  if flags=$(PKG_CONFIG_PATH=$R/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R pkg-config --cflags edgetap-client) &&
     c++ -std=c++17 $flags -o "$work/client" "$work/client.cpp" 2>"$work/client.txt"; then
    ok "a program builds with the installed edgetap/client.hpp (pkg-config edgetap-client: $flags)"
    said=$("$work/client" 2>&1 || true)  # the uncaught edgetap::client::Error ends it
    grep -q 'No such file or directory (does edgetapd run' <<<"$said" &&
      ok "it explains a missing socket" || fail "the client's error for a missing socket: $said"
  else
    cat "$work/client.txt" >&2; fail "a program does not build with the installed client header"
  fi
  said=$(PYTHONPATH=$R/usr/lib/python3/dist-packages python3 -c \
    'import edgetap; edgetap.ControlClient("/nonexistent")' 2>&1 || true)  # ConnectionError, explained
  grep -q 'does edgetapd run' <<<"$said" && ok "python3 imports the installed module edgetap" ||
    fail "the installed Python module: $said"

  section "the installed daemon keeps the unit's contract"
  service_contract

  section "reinstall over a local edit, remove, purge"
  echo "# local edit" >>"$R/etc/edgetap/edgetap.yaml"
  if rootdpkg --install "$data_deb" "$deb" "$dev_deb" "$python_deb"; then
    tail -n 1 "$R/etc/edgetap/edgetap.yaml" | grep -q '^# local edit$' && ok "reinstall keeps the edited conffile" ||
      fail "reinstall replaced the edited conffile"
    [ "$(status)" = "install ok installed" ] && [ -L "$wants" ] && ok "reinstalled, still enabled" || fail "reinstall: $(status)"
  fi
  if [ "$have_cuda_deb" = yes ]; then rootdpkg --remove edgetap-cuda || true; fi
  # What systemd makes for the unit when it runs (StateDirectory=, CacheDirectory=).
  mkdir -p "$R/var/lib/edgetap" "$R/var/cache/edgetap/gstreamer-1.0"
  echo '{"version":1,"cameras":{}}' >"$R/var/lib/edgetap/points.json"
  touch "$R/var/cache/edgetap/gstreamer-1.0/registry.x86_64.bin"
  if rootdpkg --remove edgetap; then
    [ "$(status)" = "deinstall ok config-files" ] && ok "removed: $(status)" || fail "status after remove: $(status)"
    [ ! -e "$R/usr/bin/edgetapd" ] && [ -f "$R/etc/edgetap/edgetap.yaml" ] && [ -f "$R/var/lib/edgetap/points.json" ] &&
      ok "remove deletes the programs, keeps the configuration and the saved points" ||
      fail "remove left programs or lost the configuration or the saved points"
  fi
  cuda_purge=()
  [ "$have_cuda_deb" = yes ] && cuda_purge=(edgetap-cuda)
  if rootdpkg --purge edgetap edgetap-dev python3-edgetap edgetap-data "${cuda_purge[@]}"; then
    [ -z "$(status)" ] || [ "$(status)" = "unknown ok not-installed" ] && ok "purged" || fail "status after purge: $(status)"
    [ ! -e "$R/etc/edgetap" ] && ok "purge deletes /etc/edgetap" || fail "purge left $(ls -A "$R/etc/edgetap")"
    [ ! -e "$wants" ] && ok "purge deletes the enable link" || fail "purge left $wants"
    [ ! -e "$R/var/lib/edgetap" ] && [ ! -e "$R/var/cache/edgetap" ] &&
      ok "purge deletes the unit's /var/lib/edgetap and /var/cache/edgetap" || fail "purge left /var/lib/edgetap or /var/cache/edgetap"
    grep -q '^edgetap:' "$R/etc/passwd" && ok "the edgetap user stays (Debian policy 9.2)" || fail "purge deleted the user"
    left=$(find "$R" -path "$R/var" -prune -o -path "$R/etc/passwd*" -prune -o -path "$R/etc/group*" -prune \
                -o -path "$R/etc/shadow*" -prune -o -path "$R/etc/gshadow*" -prune -o -path "$R/etc/.pwd.lock" -prune \
                -o -type f -print)
    [ -z "$left" ] && ok "purge leaves no files behind" || fail "files left after purge: $left"
  fi
fi

echo
if [ "$failures" -ne 0 ]; then
  echo "test-package: $failures check(s) failed (work files: ${work#"$root"/})" >&2
  exit 1
fi
echo "test-package: $deb and $data_deb pass$([ "$have_cuda_deb" = yes ] && echo ", and $cuda_deb")"
