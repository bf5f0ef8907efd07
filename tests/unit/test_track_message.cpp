#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "edgetap/publish/track_message.hpp"
#include "edgetap/publish/wire_format.hpp"

using namespace edgetap;

TEST(TrackMessage, SchemaAndSourcePixelCoordinates) {
  pipeline::Frame frame;
  frame.width = 256;
  frame.height = 256;
  frame.source_width = 1024;
  frame.source_height = 512;
  frame.index = 17;
  frame.capture_unix_us = 1000;
  const std::vector<TrackPoint> points = {{"g0x0", 127.5f, 0.f, true, 0.9f, false}, {"f3", 10.f, 20.f, false, 0.f, true}};
  pipeline::TrackMessage m;
  m.camera = "gate";
  m.seq = 5;
  m.frame = &frame;
  m.publish_unix_us = 3500;
  m.latency_ms = 2.5;
  m.points = &points;
  const auto j = nlohmann::json::parse(pipeline::encode_ndjson(m));
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["type"], "tracks");
  EXPECT_EQ(j["camera"], "gate");
  EXPECT_EQ(j["seq"], 5);
  EXPECT_EQ(j["frame"], 17);
  EXPECT_EQ(j["capture_us"], 1000);
  EXPECT_EQ(j["publish_us"], 3500);
  EXPECT_EQ(j["rung"], "klt");
  EXPECT_EQ(j["size"], nlohmann::json::array({1024, 512}));
  ASSERT_EQ(j["points"].size(), 2u);
  // Model pixel centre 127.5 of 256 maps to source pixel centre 511.5 of 1024.
  EXPECT_DOUBLE_EQ(j["points"][0]["x"].get<double>(), 511.5);
  EXPECT_DOUBLE_EQ(j["points"][0]["y"].get<double>(), 0.5);
  EXPECT_EQ(j["points"][0]["visible"], true);
  EXPECT_EQ(j["points"][1]["lost"], true);
  EXPECT_EQ(j["points"][1]["visible"], false);
}

TEST(WireFormat, DroppedCountIsSplicedFirstInBothEncodings) {
  const std::string json = R"({"v":1,"type":"tracks","camera":"c","seq":3})";
  const auto line = pipeline::wire::ndjson_with_dropped(json, 42);
  ASSERT_EQ(line.back(), '\n');
  const auto from_line = nlohmann::ordered_json::parse(line);
  EXPECT_EQ(from_line.begin().key(), "dropped");
  EXPECT_EQ(from_line["dropped"], 42);
  EXPECT_EQ(from_line["seq"], 3);

  const std::string cbor = pipeline::wire::cbor_with_dropped(pipeline::wire::cbor_of(json), 100000);
  const auto from_cbor = nlohmann::ordered_json::from_cbor(cbor);
  EXPECT_EQ(from_cbor.begin().key(), "dropped");
  EXPECT_EQ(from_cbor["dropped"], 100000);
  EXPECT_EQ(from_cbor["camera"], "c");
  EXPECT_EQ(from_cbor.size(), 5u);

  // A map of 23 fields needs a two-byte header once "dropped" makes it 24.
  nlohmann::ordered_json wide;
  for (int i = 0; i < 23; ++i) wide["k" + std::to_string(i)] = i;
  const auto spliced = nlohmann::ordered_json::from_cbor(pipeline::wire::cbor_with_dropped(pipeline::wire::cbor_of(wide.dump()), 1));
  EXPECT_EQ(spliced.size(), 24u);
  EXPECT_EQ(spliced["k22"], 22);
}
