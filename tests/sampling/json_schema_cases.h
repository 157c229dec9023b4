// The cases of tests/data/json_schema_cases.txt (format in its header): a
// schema, an instance and whether the instance satisfies the schema.
#pragma once

#include <string>
#include <vector>

namespace peak::sampling::testing {

struct JsonSchemaCase {
  int line = 0;  // of the instance, in the file
  std::string schema;
  std::string instance;
  bool valid = false;
};

// Throws std::runtime_error naming the line of a malformed one.
std::vector<JsonSchemaCase> load_json_schema_cases(const std::string& path);

}  // namespace peak::sampling::testing
