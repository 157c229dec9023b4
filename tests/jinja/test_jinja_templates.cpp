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

enum class Outcome { Rendered, Raised, Failed };

// Renders and compares with Jinja2's result: r's "output", or the message of
// the "error" Jinja2 raised. Raised: the template's own raise_exception.
Outcome expect_like_jinja2(const peak::jinja::Template& tmpl, const Value& context,
                           const peak::jinja::RenderOptions& options, const peak::jinja::Dict& r) {
  if (!r.find("error")->is_string()) {
    EXPECT_EQ(tmpl.render(context, options), r.find("output")->as_string());
    return Outcome::Rendered;
  }
  try {
    tmpl.render(context, options);
    ADD_FAILURE() << "expected the error \"" << r.find("error")->as_string() << "\"";
  } catch (const peak::jinja::TemplateError& e) {
    EXPECT_EQ(e.message(), r.find("error")->as_string());
    return dynamic_cast<const peak::jinja::TemplateRaised*>(&e) ? Outcome::Raised : Outcome::Failed;
  }
  return Outcome::Failed;
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
    const Outcome outcome = expect_like_jinja2(tmpl, context, options, r);
    rendered += outcome == Outcome::Rendered;
    raised += outcome == Outcome::Raised;
  }
  EXPECT_EQ(rendered, 77);
  EXPECT_EQ(raised, 1);
}

// Tool definitions and calls, parallel calls, documents and list content: the
// paths of the templates the fixture's plain conversations leave out. Where
// Jinja2 raised (raise_exception or a Python TypeError), the render must fail
// with the same message.
TEST(JinjaTemplates, ToolCallsRenderLikeJinja2) {
  const Value data = peak::jinja::parse_json(read_file(std::string(PEAK_TEST_DATA_DIR) + "/jinja_tool_renders.json"));
  const auto& conversations = data.as_dict().find("conversations")->items();
  peak::jinja::RenderOptions options;
  options.strftime_now = [](const std::string&) { return std::string("22 Nov 2026"); };
  int checked = 0;
  for (const Value& result : data.as_dict().find("results")->items()) {
    const auto& r = result.as_dict();
    const std::string name = r.find("template")->as_string();
    const Value& context = conversations.at(static_cast<size_t>(r.find("conversation")->as_int()));
    SCOPED_TRACE(name + " x conversation " + std::to_string(r.find("conversation")->as_int()));
    expect_like_jinja2(peak::jinja::Template::parse(read_file(kDir + name + ".jinja")), context, options, r);
    ++checked;
  }
  EXPECT_EQ(checked, 39);
}

}  // namespace
