// The 13 real chat templates of ../shared/fixtures/templates rendered for every
// conversation of cases.json must equal Jinja2's renders in expected.json byte
// for byte (rendered with Hugging Face's settings, strftime_now fixed at
// 22 Nov 2026); where Jinja2 raised, the same message must be raised.
#include <gtest/gtest.h>

#include <string>

#include "jinja/template.h"
#include "template_fixtures.h"

namespace {

using peak::jinja::Value;

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

TEST(JinjaTemplates, RenderLikeJinja2) {
  peak::jinja::RenderOptions options;
  options.strftime_now = peak::test::fixture_clock;
  int rendered = 0, raised = 0;
  for (const Value& result : peak::test::fixture_renders().items()) {
    const auto& r = result.as_dict();
    const std::string name = r.find("template")->as_string();
    const std::string case_name = r.find("case")->as_string();
    SCOPED_TRACE(name + " x " + case_name);
    const Value* c = peak::test::fixture_case(case_name);
    ASSERT_NE(c, nullptr);
    Value context = Value::dict();
    for (const auto& [key, value] : c->as_dict().entries()) {
      if (key != "name") context.set(key, value);
    }
    context.set("bos_token", *r.find("bos_token"));
    context.set("eos_token", *r.find("eos_token"));
    const auto tmpl = peak::jinja::Template::parse(peak::test::fixture_template(name));
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
  const Value data =
      peak::jinja::parse_json(peak::test::read_file(std::string(PEAK_TEST_DATA_DIR) + "/jinja_tool_renders.json"));
  const auto& conversations = data.as_dict().find("conversations")->items();
  peak::jinja::RenderOptions options;
  options.strftime_now = [](const std::string&) { return std::string("22 Nov 2026"); };
  int checked = 0;
  for (const Value& result : data.as_dict().find("results")->items()) {
    const auto& r = result.as_dict();
    const std::string name = r.find("template")->as_string();
    const Value& context = conversations.at(static_cast<size_t>(r.find("conversation")->as_int()));
    SCOPED_TRACE(name + " x conversation " + std::to_string(r.find("conversation")->as_int()));
    expect_like_jinja2(peak::jinja::Template::parse(peak::test::fixture_template(name)), context, options, r);
    ++checked;
  }
  EXPECT_EQ(checked, 39);
}

}  // namespace
