// Hostile templates: every one must end in TemplateError, quickly, without
// exhausting memory or stack: endless loops, deep recursion, huge output and
// string repetition, deep nesting in the source and in JSON.
#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

#include "jinja/template.h"

namespace {

// How much processor time refusing a hostile template may take: a guard
// against work that grows faster than the input (a parse or a render
// quadratic in these inputs of 100,000 and 200,000 tokens would take minutes),
// not a speed target: ten times what the largest of them takes on a loaded
// machine. Processor time, not wall time; sanitizer builds run every step many
// times slower, by a factor that depends on the machine's load and caches, so
// there only the refusal is checked.
constexpr double kMaxSeconds = 5.0;
constexpr bool kCheckTime = PEAK_TEST_SANITIZED == 0;

using peak::jinja::Template;
using peak::jinja::TemplateError;
using peak::jinja::Value;

// The error's message; fails the test unless parsing or rendering threw
// TemplateError (within kMaxSeconds of processor time where that is checked).
std::string refused(const std::string& source, const Value& context = Value::dict()) {
  const std::clock_t start = std::clock();
  std::string message;
  try {
    Template::parse(source).render(context);
    ADD_FAILURE() << "rendered: " << source.substr(0, 80);
  } catch (const TemplateError& e) {
    message = e.message();
  }
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  if (kCheckTime) {
    EXPECT_LT(seconds, kMaxSeconds) << source.substr(0, 80);
  }
  return message;
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

TEST(JinjaLimits, LoopsRunOutOfSteps) {
  EXPECT_TRUE(has(refused("{% for i in range(10**9) %}{% endfor %}"), "Range too big"));
  EXPECT_TRUE(has(refused("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"), "steps"));
  EXPECT_TRUE(has(refused("{% set ns = namespace(l=[1]) %}{% for i in range(100000) %}{% for x in ns.l %}"
                          "{% set ns.l = ns.l + [x] %}{% endfor %}{% endfor %}"),
                  "steps"));
}

TEST(JinjaLimits, RecursionIsBounded) {
  EXPECT_TRUE(has(refused("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"), "recursion deeper than"));
  EXPECT_TRUE(has(refused("{% macro f() %}{% call f() %}{% endcall %}{% endmacro %}{{ f() }}"), "recursion deeper than"));
}

TEST(JinjaLimits, OutputAndStringsAreBounded) {
  EXPECT_TRUE(has(refused("{{ 'x' * 10**9 }}"), "exceeds the output limit"));
  EXPECT_TRUE(has(refused("{{ [0] * 10**9 }}"), "exceeds the output limit"));
  EXPECT_TRUE(has(refused("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"), "output exceeds"));
  EXPECT_TRUE(has(refused("{% set ns = namespace(s='xx') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}"),
                  "exceeds the output limit"));
  EXPECT_TRUE(has(refused("{{ ('x' * 100000)|replace('x', 'y' * 1000) }}"), "exceeds the output limit"));
  EXPECT_TRUE(has(refused("{{ 'a'|indent(10**9, true) }}"), "exceeds the output limit"));
  EXPECT_TRUE(has(refused("{{ 2 ** 100 }}"), "integer overflow"));
  // The limit is the caller's.
  peak::jinja::RenderOptions small;
  small.limits.max_output_bytes = 10;
  EXPECT_THROW(Template::parse("{{ 'x' * 11 }}").render(Value::dict(), small), TemplateError);
  EXPECT_EQ(Template::parse("{{ 'x' * 10 }}").render(Value::dict(), small), "xxxxxxxxxx");
}

TEST(JinjaLimits, DeepSourceNestingIsRefused) {
  const std::pair<const char*, const char*> nestings[] = {
      {"(", ")"}, {"[", "]"}, {"{'a':", "}"}, {"not ", ""}, {"-", ""}, {"x if y else ", ""}, {"f(", ")"}};
  for (const auto& [open, close] : nestings) {
    std::string source = "{{ ";
    for (int i = 0; i < 100000; ++i) source += open;
    source += "1";
    for (int i = 0; i < 100000; ++i) source += close;
    EXPECT_TRUE(has(refused(source + " }}"), "nests deeper than")) << open;
  }
  std::string blocks;
  for (int i = 0; i < 10000; ++i) blocks += "{% if true %}";
  EXPECT_TRUE(has(refused(blocks), "nests deeper than"));
  // Long left-nested chains parse without recursion; evaluating them is bounded.
  std::string chain = "{{ 1";
  for (int i = 0; i < 200000; ++i) chain += " + 1";
  EXPECT_TRUE(has(refused(chain + " }}"), "recursion deeper than"));
  std::string filters = "{{ 'a'";
  for (int i = 0; i < 200000; ++i) filters += "|trim";
  EXPECT_TRUE(has(refused(filters + " }}"), "recursion deeper than"));
}

TEST(JinjaLimits, DeepValuesAreRefused) {
  EXPECT_TRUE(has(refused("{% set ns = namespace(v=[]) %}{% for i in range(100000) %}{% set ns.v = [ns.v] %}{% endfor %}"),
                  "nested deeper than"));
  EXPECT_TRUE(has(refused("{% set ns = namespace() %}{% set ns.self = ns %}"), "cannot hold a namespace"));
  EXPECT_TRUE(has(refused("{% set ns = namespace() %}{% set ns.l = [ns] %}"), "cannot hold a namespace"));
}

TEST(JinjaLimits, ReadingBigValuesOverAndOverRunsOutOfSteps) {
  std::vector<Value> numbers(100000, Value(1));
  const Value context = Value::dict().set("big", std::string(1 << 20, 'x')).set("numbers", Value::list(numbers));
  EXPECT_TRUE(has(refused("{% macro m() %}{{ big }}{% endmacro %}{% for i in range(100000) %}{% set y = m() %}{% endfor %}",
                          context),
                  "steps"));
  EXPECT_TRUE(has(refused("{% for i in range(100000) %}{% set y = big[0] %}{% endfor %}", context), "steps"));
  EXPECT_TRUE(has(refused("{% for i in range(100000) %}{% for n in numbers %}{% break %}{% endfor %}{% endfor %}", context),
                  "steps"));
  EXPECT_TRUE(has(refused("{% set l = [big] * 1000 %}{% if l == l %}{% endif %}", context), "steps"));
  EXPECT_TRUE(has(refused("{% for i in range(100000) %}{% set y = big|length %}{% endfor %}", context), "steps"));
}

TEST(JinjaLimits, LongElifChainsDoNotRecurse) {
  std::string source = "{% if x == 0 %}0";
  for (int i = 1; i < 50000; ++i) source += "{% elif x == " + std::to_string(i) + " %}" + std::to_string(i);
  source += "{% else %}none{% endif %}";
  const Template t = Template::parse(source);
  EXPECT_EQ(t.render(Value::dict().set("x", 49999)), "49999");
  EXPECT_EQ(t.render(Value::dict().set("x", -1)), "none");
}

TEST(JinjaLimits, DeepJsonIsRefused) {
  EXPECT_THROW(peak::jinja::parse_json(std::string(100000, '[') + std::string(100000, ']')), peak::jinja::JsonError);
}

}  // namespace
