// Names the calling thread as `top -H`, /proc/PID/task/*/comm and debuggers
// show it: Linux keeps at most 15 characters, so longer names are cut.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace edgetap {

inline void name_this_thread(std::string_view name) {
  constexpr std::size_t kMaxThreadName = 15;
  const std::string kept(name.substr(0, kMaxThreadName));
  pthread_setname_np(pthread_self(), kept.c_str());
}

}  // namespace edgetap
