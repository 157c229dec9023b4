// The 13 real chat templates of ../shared/fixtures/templates rendered for every
// conversation of cases.json must equal Jinja2's renders in expected.json byte
// for byte (rendered with Hugging Face's settings, strftime_now fixed at
// 22 Nov 2026); where Jinja2 raised, the same message must be raised.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "jinja/template.h"

namespace {

using peak::jinja::Value;

const std::string kDir = std::string(PEAK_SHARED_DIR) + "/fixtures/templates/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixture's clock: 22 Nov 2026, for the formats the templates use.
std::string fixed_clock(const std::string& format) {
  if (format == "%d %b %Y") return "22 Nov 2026";
  if (format == "%B %d, %Y") return "November 22, 2026";
  if (format == "%Y-%m-%d") return "2026-11-22";
  ADD_FAILURE() << "unexpected strftime format " << format;
  return "";
}

const Value* case_named(const Value& cases, const std::string& name) {
  for (const Value& c : cases.items()) {
    if (c.as_dict().find("name")->as_string() == name) return &c;
  }
  return nullptr;
}

TEST(JinjaTemplates, RenderLikeJinja2) {
  const Value expected = peak::jinja::parse_json(read_file(kDir + "expected.json"));
  const Value cases = peak::jinja::parse_json(read_file(kDir + "cases.json"));
  peak::jinja::RenderOptions options;
  options.strftime_now = fixed_clock;
  int rendered = 0, raised = 0;
  for (const Value& result : expected.as_dict().find("results")->items()) {
    const auto& r = result.as_dict();
    const std::string name = r.find("template")->as_string();
    const std::string case_name = r.find("case")->as_string();
    SCOPED_TRACE(name + " x " + case_name);
    const Value* c = case_named(cases, case_name);
    ASSERT_NE(c, nullptr);
    Value context = Value::dict();
    for (const auto& [key, value] : c->as_dict().entries()) {
      if (key != "name") context.set(key, value);
    }
    context.set("bos_token", *r.find("bos_token"));
    context.set("eos_token", *r.find("eos_token"));
    const auto tmpl = peak::jinja::Template::parse(read_file(kDir + name + ".jinja"));
    if (r.find("error")->is_string()) {
      try {
        tmpl.render(context, options);
        ADD_FAILURE() << "expected raise_exception(\"" << r.find("error")->as_string() << "\")";
      } catch (const peak::jinja::TemplateRaised& e) {
        EXPECT_EQ(std::string(e.what()), r.find("error")->as_string());
        ++raised;
      }
      continue;
    }
    EXPECT_EQ(tmpl.render(context, options), r.find("output")->as_string());
    ++rendered;
  }
  EXPECT_EQ(rendered, 77);
  EXPECT_EQ(raised, 1);
}

}  // namespace
