#include "template_fixtures.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "jinja/json.h"

namespace peak::test {
namespace {

const std::string kDir = std::string(PEAK_SHARED_DIR) + "/fixtures/templates/";

const jinja::Value& parsed(const std::string& file) {
  static const jinja::Value cases = jinja::parse_json(read_file(kDir + "cases.json"));
  static const jinja::Value expected = jinja::parse_json(read_file(kDir + "expected.json"));
  return file == "cases.json" ? cases : expected;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string fixture_template(const std::string& name) { return read_file(kDir + name + ".jinja"); }

const jinja::Value& fixture_field(const jinja::Value& dict, const char* key) {
  const jinja::Value* v = dict.as_dict().find(key);
  if (!v) throw std::runtime_error(std::string("fixture lacks '") + key + "'");
  return *v;
}

const jinja::Value& fixture_renders() { return *parsed("expected.json").as_dict().find("results"); }

const jinja::Value* fixture_case(const std::string& name) {
  for (const jinja::Value& c : parsed("cases.json").items()) {
    if (c.as_dict().find("name")->as_string() == name) return &c;
  }
  return nullptr;
}

std::string fixture_render(const std::string& template_name, const std::string& case_name) {
  for (const jinja::Value& r : fixture_renders().items()) {
    if (r.as_dict().find("template")->as_string() == template_name &&
        r.as_dict().find("case")->as_string() == case_name) {
      return r.as_dict().find("output")->as_string();
    }
  }
  ADD_FAILURE() << "no render of " << template_name << " x " << case_name;
  return {};
}

std::string fixture_clock(const std::string& format) {
  if (format == "%d %b %Y") return "22 Nov 2026";
  if (format == "%B %d, %Y") return "November 22, 2026";
  if (format == "%Y-%m-%d") return "2026-11-22";
  ADD_FAILURE() << "unexpected strftime format " << format;
  return "";
}

}  // namespace peak::test
