# OpenCV from Debian's per-module -dev packages (libopencv-dev, which ships the
# CMake config, pulls in hundreds of packages we do not use). Defines
# edgetap::opencv (core, imgproc, video: what the daemon runs on) and
# edgetap::opencv_imgcodecs (image files, for the CLI's demo strip and the eval
# tools only: its dependencies — GDAL, Poppler, HDF5 — stay out of edgetapd).
find_path(EDGETAP_OPENCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
foreach(module core imgproc video imgcodecs)
  find_library(EDGETAP_OPENCV_${module} NAMES opencv_${module} REQUIRED)
endforeach()
add_library(edgetap_opencv INTERFACE)
target_include_directories(edgetap_opencv SYSTEM INTERFACE ${EDGETAP_OPENCV_INCLUDE_DIR})
target_link_libraries(edgetap_opencv INTERFACE ${EDGETAP_OPENCV_core} ${EDGETAP_OPENCV_imgproc} ${EDGETAP_OPENCV_video})
add_library(edgetap::opencv ALIAS edgetap_opencv)
add_library(edgetap_opencv_imgcodecs INTERFACE)
target_link_libraries(edgetap_opencv_imgcodecs INTERFACE edgetap_opencv ${EDGETAP_OPENCV_imgcodecs})
add_library(edgetap::opencv_imgcodecs ALIAS edgetap_opencv_imgcodecs)
