// One rung's tracker, built on a thread of its own while the rung in force
// keeps tracking, and kept in step with the camera until it takes over.
//
// Building a network rung costs 65-245 ms on a GPU (a session, its plans, its
// first graph capture): paid on the camera's thread it stalls that camera for
// several frames, exactly when the governor has found it over budget. Here
// the new tracker sees the frame the switch was asked at and its tracks, then
// every frame the camera pushes after it; it is ready when it has caught up.
// The camera's thread hands over frames and takes the tracker; nothing else
// is shared.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "edgetap/tracker.hpp"

namespace edgetap::pipeline {

class RungBuild {
 public:
  // Makes the tracker (null with an error when it cannot).
  using Make = std::function<std::unique_ptr<Tracker>(std::string& error)>;
  // A packed RGB frame at the new rung's size.
  struct Frame {
    std::vector<std::uint8_t> rgb;
    int width = 0, height = 0;
    ImageView view() const { return {rgb.data(), width, height, static_cast<std::size_t>(width) * 3}; }
  };
  // Frames a build may fall behind by before the camera waits for it: a
  // rung slower than the camera's rate would otherwise never catch up.
  static constexpr std::size_t kMaxBacklog = 90;
  // Frames given after the tracker was made before take() waits for the build to
  // catch up: a rung no faster than the one in force (or starved of cores beside it)
  // would otherwise always be busy when asked, and never take over.
  static constexpr std::size_t kFramesBeforeWaiting = 30;

  // Starts the thread: make, then `first` (empty: no frame yet), then `queries`
  // (in the new rung's pixels), then every frame given to push().
  RungBuild(Make make, Frame first, std::vector<Query> queries);
  // Stops the thread (after the make in progress, if any).
  ~RungBuild();
  RungBuild(const RungBuild&) = delete;
  RungBuild& operator=(const RungBuild&) = delete;

  // A frame the new tracker must see too. Waits while kMaxBacklog frames are queued.
  void push(Frame frame);
  // The tracker, once it has seen every frame given so far; null while it has
  // not, and for a build that failed (error() then says why). Once the tracker
  // was made and kFramesBeforeWaiting frames given since, it waits for that.
  std::unique_ptr<Tracker> take();
  bool failed() const;
  std::string error() const;

 private:
  void run(const Make& make, Frame first, std::vector<Query> queries);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Frame> backlog_;
  std::unique_ptr<Tracker> tracker_;  // set once made; handed out when the backlog is empty
  std::size_t given_since_made_ = 0;  // frames push() took after the tracker was made
  bool working_ = true;               // the thread is making the tracker or pushing a frame
  bool stopping_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace edgetap::pipeline
