#!/usr/bin/env bash
# Installs every build and runtime dependency of EdgeTAP from Debian 12 packages.
# Idempotent: packages already present are skipped by apt; uses sudo when not root.
set -euo pipefail

BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  debhelper dpkg-dev fakeroot lintian help2man systemd
  libgtest-dev libgmock-dev
  libyaml-cpp-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev libsystemd-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstrtspserver-1.0-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-video-dev
  libopencv-imgcodecs-dev libopencv-videoio-dev libjpeg-dev
  libcpp-httplib-dev libmosquitto-dev libopenblas-dev
  libpng-dev zlib1g-dev
  clang libclang-rt-14-dev   # the fuzz targets (libFuzzer): scripts/fuzz.sh
)
RUNTIME_PACKAGES=(
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-libav gstreamer1.0-rtsp
  python3 mosquitto openssl
  python3-jsonschema python3-yaml   # tests/integration/schema_test.py
  chromium   # the live view's browser test (tests/integration/live_view_browser_test.py)
)

missing=()
for p in "${BUILD_PACKAGES[@]}" "${RUNTIME_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#BUILD_PACKAGES[@]}+${#RUNTIME_PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
