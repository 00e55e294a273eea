// The metrics page's own rules: label escaping, cumulative histogram buckets, and the
// bound on series that clients' programs could otherwise grow.
#include "server/metrics/metrics.h"

#include <gtest/gtest.h>

#include "server/metrics/call_scope.h"

namespace et::server::metrics {
namespace {

TEST(Metrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  // UTF-8 passes; bytes that are not UTF-8 become the text \xNN (the format requires
  // UTF-8: one bad value would make the whole page unreadable).
  EXPECT_EQ(escape_label("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escape_label("m\xff\xc3"), "m\\\\xff\\\\xc3");
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  Histogram h;
  h.observe(500);             // 0.5 µs: the first bucket
  h.observe(3'000);           // 3 µs: le 5e-06
  h.observe(20'000'000'000);  // 20 s: +Inf only
  std::string out;
  h.write(out, "x", "m=\"a\"");
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"1e-06\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"2.5e-06\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"5e-06\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"10\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{m=\"a\",le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_count{m=\"a\"} 3\n"), std::string::npos) << out;
}

TEST(Metrics, SeriesPastTheBoundAreCountedTogether) {
  Metrics m(2);
  CallSeries* a = m.series("a", "forward", Transport::kGrpc);
  EXPECT_EQ(m.series("a", "forward", Transport::kGrpc), a);
  m.series("b", "forward", Transport::kGrpc);
  CallSeries* c = m.series("c", "forward", Transport::kGrpc);
  EXPECT_EQ(m.series("d", "forward", Transport::kGrpc), c);
  EXPECT_NE(c->labels.find("model=\"_other\""), std::string::npos);
}

TEST(Metrics, AScopeCountsItsCallWithItsCode) {
  Metrics m;
  {
    CallScope scope(&m, Transport::kFastPath);
    CallScope::note_target("add.pte", "0123456789abcdef", "forward");
    CallScope::note_compute(1000);
    scope.set_code(3);
  }
  { CallScope thrown(&m, Transport::kFastPath); }  // no code: INTERNAL, no method
  const std::string page = m.render();
  EXPECT_NE(page.find("et_serverd_calls_total{model=\"add\",method=\"forward\",transport=\"fast_"
                      "path\",code=\"INVALID_ARGUMENT\"} 1"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("model=\"\",method=\"\",transport=\"fast_path\",code=\"INTERNAL\"} 1"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("et_serverd_call_compute_seconds_count{model=\"add\",method=\"forward\","
                      "transport=\"fast_path\"} 1"),
            std::string::npos);
  EXPECT_EQ(model_label("", "0123456789abcdef"), "sha256:0123456789ab");
}

}  // namespace
}  // namespace et::server::metrics
