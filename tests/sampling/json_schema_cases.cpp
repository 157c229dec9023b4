#include "json_schema_cases.h"

#include <fstream>
#include <stdexcept>

namespace peak::sampling::testing {

std::vector<JsonSchemaCase> load_json_schema_cases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<JsonSchemaCase> cases;
  std::string schema;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    const std::string word = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (word == "schema") {
      schema = rest;
    } else if ((word == "valid" || word == "invalid") && !schema.empty()) {
      cases.push_back({number, schema, rest, word == "valid"});
    } else {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": expected schema, valid or invalid");
    }
  }
  return cases;
}

}  // namespace peak::sampling::testing
