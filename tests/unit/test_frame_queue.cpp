#include <gtest/gtest.h>

#include <thread>

#include "edgetap/capture/frame_queue.hpp"

using edgetap::pipeline::Frame;
using edgetap::pipeline::FrameQueue;
using namespace std::chrono_literals;

namespace {
Frame frame(std::uint64_t index) {
  Frame f;
  f.index = index;
  return f;
}
}  // namespace

TEST(FrameQueue, DropsOldestAndCountsEveryDrop) {
  FrameQueue queue(3, FrameQueue::Overflow::drop_oldest);
  for (std::uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(queue.push(frame(i)));
  EXPECT_EQ(queue.drops(), 7u);
  EXPECT_EQ(queue.size(), 3u);
  for (std::uint64_t expected : {7u, 8u, 9u}) EXPECT_EQ(queue.pop(10ms)->index, expected);
  EXPECT_FALSE(queue.pop(10ms).has_value());
}

TEST(FrameQueue, BlockingQueueWaitsForTheConsumer) {
  FrameQueue queue(2, FrameQueue::Overflow::block);
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < 50; ++i) queue.push(frame(i));
    queue.close();
  });
  std::uint64_t expected = 0;
  while (auto f = queue.pop(1000ms)) EXPECT_EQ(f->index, expected++);
  producer.join();
  EXPECT_EQ(expected, 50u);
  EXPECT_EQ(queue.drops(), 0u);
}

TEST(FrameQueue, CloseWakesWaitersAndRejectsPushes) {
  FrameQueue queue(2, FrameQueue::Overflow::drop_oldest);
  std::thread closer([&] {
    std::this_thread::sleep_for(20ms);
    queue.close();
  });
  EXPECT_FALSE(queue.pop(5000ms).has_value());
  closer.join();
  EXPECT_TRUE(queue.closed());
  EXPECT_FALSE(queue.push(frame(1)));
}
