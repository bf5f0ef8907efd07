#include "edgetap/ladder/rung_build.hpp"

#include "edgetap/thread_name.hpp"

#include <exception>
#include <utility>

namespace edgetap::pipeline {

RungBuild::RungBuild(Make make, Frame first, std::vector<Query> queries)
    : thread_([this, make = std::move(make), first = std::move(first), queries = std::move(queries)]() mutable {
        run(make, std::move(first), std::move(queries));
      }) {}

RungBuild::~RungBuild() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

// The tracker is touched here only while working_ is set, and handed out by
// take() only while it is not: the two threads never use it at once.
void RungBuild::run(const Make& make, Frame first, std::vector<Query> queries) {
  name_this_thread("rung-build");
  std::string error;
  Tracker* tracker = nullptr;
  std::vector<TrackPoint> ignored;
  try {
    std::unique_ptr<Tracker> made = make(error);
    if (made) {
      if (!first.rgb.empty()) {
        const Status status = made->push_frame(first.view(), ignored);
        if (!status) error = status.message();
      }
      if (error.empty()) made->add_queries(queries);
      tracker = made.get();
      std::lock_guard lock(mutex_);
      tracker_ = std::move(made);
    }
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "the rung's tracker threw a non-standard exception";
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!error.empty() || tracker == nullptr) {
      error_ = error.empty() ? "the rung's tracker could not be made" : error;
      tracker_.reset();
    }
    working_ = false;
    changed_.notify_all();
    if (!error_.empty()) return;
    changed_.wait(lock, [&] { return stopping_ || !backlog_.empty(); });
    if (stopping_) return;
    Frame frame = std::move(backlog_.front());
    backlog_.pop_front();
    working_ = true;
    changed_.notify_all();  // room in the backlog
    lock.unlock();
    try {
      const Status status = tracker->push_frame(frame.view(), ignored);
      if (!status) error = status.message();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "the rung's tracker threw a non-standard exception";
    }
    lock.lock();
  }
}

void RungBuild::push(Frame frame) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return backlog_.size() < kMaxBacklog || !error_.empty(); });
  if (!error_.empty()) return;
  backlog_.push_back(std::move(frame));
  if (tracker_) ++given_since_made_;
  changed_.notify_all();
}

std::unique_ptr<Tracker> RungBuild::take() {
  std::unique_lock lock(mutex_);
  if (tracker_ && given_since_made_ >= kFramesBeforeWaiting) {
    changed_.wait(lock, [&] { return (!working_ && backlog_.empty()) || !error_.empty(); });
  }
  if (working_ || !backlog_.empty() || !error_.empty() || !tracker_) return nullptr;
  stopping_ = true;  // the thread, idle, ends without touching the tracker again
  changed_.notify_all();
  return std::move(tracker_);
}

bool RungBuild::failed() const {
  std::lock_guard lock(mutex_);
  return !error_.empty();
}

std::string RungBuild::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace edgetap::pipeline
