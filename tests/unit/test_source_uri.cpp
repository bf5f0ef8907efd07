// A camera's `source` URI: file:// paths with percent-escapes (as file managers
// and `realpath | urlencode` write them) decoded, malformed escapes rejected
// with the key's line.
#include <gtest/gtest.h>

#include <string>

#include "edgetap/config/load.hpp"

using namespace edgetap::config;

namespace {

Source source_of(const std::string& uri) {
  return load_string("cameras:\n  - name: c\n    source: \"" + uri + "\"\n", "test.yaml", "/base").cameras.at(0).source;
}

std::string problems_of(const std::string& uri) {
  try {
    load_string("cameras:\n  - name: c\n    source: \"" + uri + "\"\n", "test.yaml", "/base");
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected " << uri << " to be rejected";
  return "";
}

}  // namespace

TEST(SourceUri, FilePathPercentEscapesAreDecoded) {
  const Source absolute = source_of("file:///videos/my%20clip.avi");
  EXPECT_EQ(absolute.kind, SourceKind::file);
  EXPECT_EQ(absolute.location, "/videos/my clip.avi");
  EXPECT_EQ(absolute.uri, "file:///videos/my%20clip.avi");  // as written
  EXPECT_EQ(source_of("file://clips/caf%C3%A9%2b%2B%25.mp4").location, "/base/clips/caf\xC3\xA9++%.mp4");
  EXPECT_EQ(source_of("file:///videos/my clip.avi").location, "/videos/my clip.avi");  // a raw space still works
}

TEST(SourceUri, MalformedPercentEscapesAreRejectedWithTheKey) {
  const std::string bad = problems_of("file:///videos/50%off.avi");
  EXPECT_NE(bad.find("test.yaml:3:13: cameras[0] (camera 'c').source: malformed percent-escape '%of'"),
            std::string::npos) << bad;
  EXPECT_NE(bad.find("write %25 for a '%' itself"), std::string::npos) << bad;
  EXPECT_NE(problems_of("file:///videos/clip.avi%").find("malformed percent-escape '%'"), std::string::npos);
  EXPECT_NE(problems_of("file:///videos/clip.avi%2").find("malformed percent-escape '%2'"), std::string::npos);
  EXPECT_NE(problems_of("file:///videos/a%00b.avi").find("%00, a NUL byte"), std::string::npos);
}
