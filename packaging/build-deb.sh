#!/usr/bin/env bash
# Builds the Debian packages edgetap_<version>_<arch>.deb,
# edgetap-data_<version>_all.deb, edgetap-dev_<version>_all.deb,
# python3-edgetap_<version>_all.deb and, where the CUDA toolkit with cuBLAS and
# cuDNN 9 is installed (CUDA_HOME, default /usr/local/cuda),
# edgetap-cuda_<version>_<arch>.deb into build/deb/. Without it the CUDA
# package is skipped, with a line saying why.
#
#   packaging/build-deb.sh          package the working tree
#   packaging/build-deb.sh --head   package the last commit (plus the working
#                                   tree's packaging/), for a checkout where
#                                   someone's work in progress does not build
#
# The debian/ directory lives in packaging/debian/ so the repository root stays
# free of it: this script copies the sources (tracked files and untracked ones
# git does not ignore) to build/deb/src/edgetap-<version>/, adds
# packaging/debian/ there as debian/ (with the unit and sysusers snippet from
# packaging/systemd/), and runs dpkg-buildpackage in the copy.
# Needs the build dependencies of packaging/debian/control
# (scripts/install-deps.sh installs them). Takes a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/build/deb
from=worktree
case "${1:-}" in
  "") ;;
  --head) from=head ;;
  *) echo "usage: packaging/build-deb.sh [--head]" >&2; exit 2 ;;
esac

# Copies the working tree's files under the given paths (all when none) to $1.
copy_worktree() {
  local dest=$1; shift
  git ls-files -z --cached --others --exclude-standard -- "$@" |
    while IFS= read -r -d '' f; do
      [ -e "$f" ] && printf '%s\0' "$f"   # skip files deleted in the working tree
    done |
    tar --null --files-from=- --create --file=- | tar --extract --file=- --directory="$dest"
}

# One version: the changelog's must be the CMake project's.
changelog_version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
cmake_version=$(sed -n 's/^project(edgetap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
if [ "${changelog_version%%-*}" != "$cmake_version" ]; then
  echo "build-deb: packaging/debian/changelog says $changelog_version, CMakeLists.txt says $cmake_version;" \
       "add a changelog entry (dch -v $cmake_version)" >&2
  exit 1
fi

src=$out/src/edgetap-$changelog_version
rm -rf "$out"
mkdir -p "$src"
if [ "$from" = head ]; then
  git archive --format=tar HEAD | tar --extract --file=- --directory="$src"
  rm -rf "$src/packaging"
  copy_worktree "$src" packaging
else
  copy_worktree "$src"
fi
if [ -e "$src/debian" ]; then
  echo "build-deb: the source tree has a debian/ of its own; the packaging lives in packaging/debian/" >&2
  exit 1
fi
cp -r packaging/debian "$src/debian"
# The unit and the sysusers snippet live once, in packaging/systemd/, where CI
# verifies them; debhelper wants them in debian/ before dh starts (it skips
# helpers whose files are absent at that point).
cp packaging/systemd/edgetapd.service "$src/debian/edgetap.edgetapd.service"
cp packaging/systemd/edgetap.sysusers "$src/debian/edgetap.sysusers"

# The CUDA package needs nvcc, cuBLAS and cuDNN 9 (NVIDIA's, not Debian packages).
cuda_home=${CUDA_HOME:-/usr/local/cuda}
cuda_missing=""
[ -x "$cuda_home/bin/nvcc" ] || cuda_missing="$cuda_missing nvcc"
ls "$cuda_home"/lib64/libcublas.so* >/dev/null 2>&1 || cuda_missing="$cuda_missing cuBLAS"
{ ls "$cuda_home"/lib64/libcudnn.so.9* || ldconfig -p | grep -q 'libcudnn.so.9 '; } >/dev/null 2>&1 ||
  cuda_missing="$cuda_missing cuDNN-9"
profiles=()
if [ -n "$cuda_missing" ]; then
  echo "build-deb: edgetap-cuda skipped: no$cuda_missing under $cuda_home (set CUDA_HOME to build it)"
  profiles=(--build-profiles=nocuda)
fi

echo "build-deb: building edgetap $changelog_version ($from) in ${src#"$root"/}"
(cd "$src" && CUDA_HOME=$cuda_home dpkg-buildpackage --unsigned-source --unsigned-changes --build=binary \
   "${profiles[@]}" --jobs="$(nproc)" >"$out/build.log" 2>&1) || {
  tail -n 60 "$out/build.log" >&2
  echo "build-deb: dpkg-buildpackage failed; full log: ${out#"$root"/}/build.log" >&2
  exit 1
}
find "$out/src" -maxdepth 1 -type f \( -name '*.deb' -o -name '*.ddeb' -o -name '*.changes' -o -name '*.buildinfo' \) \
  -exec mv -t "$out" {} +
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
deb=$out/edgetap_${changelog_version}_${arch}.deb
data_deb=$out/edgetap-data_${changelog_version}_all.deb
cuda_deb=$out/edgetap-cuda_${changelog_version}_${arch}.deb
expected=("$deb" "$data_deb" "$out/edgetap-dev_${changelog_version}_all.deb"
          "$out/python3-edgetap_${changelog_version}_all.deb")
[ -z "$cuda_missing" ] && expected+=("$cuda_deb")
for d in "${expected[@]}"; do
  [ -f "$d" ] || { echo "build-deb: expected ${d#"$root"/} was not produced" >&2; exit 1; }
done
echo "build-deb: ${expected[*]#"$root"/} (log: ${out#"$root"/}/build.log)"
