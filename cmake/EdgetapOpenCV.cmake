# OpenCV from Debian's per-module -dev packages (libopencv-dev, which ships the
# CMake config, pulls in hundreds of packages we do not use). Defines edgetap::opencv.
find_path(EDGETAP_OPENCV_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4 REQUIRED)
set(_edgetap_opencv_libs)
foreach(module core imgproc video imgcodecs)
  find_library(EDGETAP_OPENCV_${module} NAMES opencv_${module} REQUIRED)
  list(APPEND _edgetap_opencv_libs ${EDGETAP_OPENCV_${module}})
endforeach()
add_library(edgetap_opencv INTERFACE)
target_include_directories(edgetap_opencv SYSTEM INTERFACE ${EDGETAP_OPENCV_INCLUDE_DIR})
target_link_libraries(edgetap_opencv INTERFACE ${_edgetap_opencv_libs})
add_library(edgetap::opencv ALIAS edgetap_opencv)
