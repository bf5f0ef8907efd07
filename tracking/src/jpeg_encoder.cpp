#include "jpeg_encoder.hpp"

// libjpeg's header needs size_t and FILE declared first.
#include <cstddef>
#include <cstdio>
#include <jpeglib.h>

#include <csetjmp>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace edgetap::pipeline {
namespace {

// libjpeg reports errors through a callback that must not return: it jumps back
// to encode_jpeg with the message, which then throws outside libjpeg's frames.
struct ErrorTrap {
  jpeg_error_mgr manager{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX]{};
};

[[noreturn]] void jump_on_error(j_common_ptr info) {
  auto* trap = reinterpret_cast<ErrorTrap*>(info->err);
  (*info->err->format_message)(info, trap->message);
  std::longjmp(trap->jump, 1);
}

}  // namespace

std::vector<std::uint8_t> encode_jpeg(const cv::Mat& bgr, int quality) {
  CV_Assert(bgr.type() == CV_8UC3);
  jpeg_compress_struct info{};
  ErrorTrap trap;
  info.err = jpeg_std_error(&trap.manager);
  trap.manager.error_exit = jump_on_error;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(google-runtime-int): libjpeg's type
  // Nothing with a destructor lives between setjmp and the last libjpeg call.
  if (setjmp(trap.jump) != 0) {
    jpeg_destroy_compress(&info);
    std::free(buffer);  // NOLINT(cppcoreguidelines-no-malloc): jpeg_mem_dest allocates with malloc
    throw std::runtime_error(std::string("JPEG encoding failed: ") + trap.message);
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(bgr.cols);
  info.image_height = static_cast<JDIMENSION>(bgr.rows);
  info.input_components = 3;
  info.in_color_space = JCS_EXT_BGR;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(bgr.ptr<unsigned char>(static_cast<int>(info.next_scanline)));
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  const std::unique_ptr<unsigned char, decltype(&std::free)> owned(buffer, &std::free);
  return {owned.get(), owned.get() + size};
}

}  // namespace edgetap::pipeline
