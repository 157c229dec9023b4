// Writes every case of tests/data/gbnf_cases.txt and json_schema_cases.txt as
// one flat list, for the tests that judge them through the C API
// (tests/capi/test_capi_grammar_cases.c) and through `peak grammar check`
// (tests/tools/grammar_check_cases.cpp), neither of which reads the case
// files' formats:
//
//   write_grammar_case_list DATA_DIR OUT_DIR
//
// writes each grammar to OUT_DIR/gNNN.gbnf, each schema to OUT_DIR/sNNN.json,
// and OUT_DIR/grammar_cases.txt with one case a line:
//
//   FILE ROOT complete|prefix|rejected|incomplete TEXT   a verdict on TEXT
//   FILE ROOT error LINE:COLUMN WORDS                    the grammar is refused there
//
// FILE is the grammar's or the schema's file name (.json: a schema, whose ROOT
// is "-"); TEXT, the rest of the line, has every backslash and every byte
// outside printable ASCII written as llama.cpp's tools read escapes (\\, \xHH).
// "incomplete" is an instance the schema does not accept: not a complete
// string of its grammar, a prefix or rejected. Instances are judged as
// tests/sampling/test_json_schema_cases.cpp judges them: written compactly.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gbnf_cases.h"
#include "json/json.h"
#include "json_schema_cases.h"

namespace {

using peak::sampling::GrammarVerdict;
using namespace peak::sampling::testing;

std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte > 0x7e) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

const char* verdict_word(GrammarVerdict verdict) {
  switch (verdict) {
    case GrammarVerdict::kComplete: return "complete";
    case GrammarVerdict::kPrefix: return "prefix";
    default: return "rejected";
  }
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string numbered(char kind, size_t n, const char* extension) {
  char name[32];
  std::snprintf(name, sizeof name, "%c%03zu.%s", kind, n, extension);
  return name;
}

bool write_gbnf_cases(const std::string& data_dir, const std::string& out_dir, std::ostream& list) {
  const GbnfCaseFile file = load_gbnf_cases(data_dir + "/gbnf_cases.txt");
  if (!file.error.empty()) return (std::cerr << file.error << "\n"), false;
  for (size_t b = 0; b < file.blocks.size(); ++b) {
    const GbnfBlock& block = file.blocks[b];
    const std::string name = numbered('g', b, "gbnf");
    if (!write_file(out_dir + "/" + name, block.grammar)) return (std::cerr << "cannot write " << name << "\n"), false;
    for (const GbnfCase& c : block.cases) {
      list << name << ' ' << block.root << ' ';
      if (c.is_error) {
        list << "error " << c.line << ':' << c.column << ' ' << c.message << '\n';
      } else {
        list << verdict_word(c.verdict) << ' ' << escaped(c.text) << '\n';
      }
    }
  }
  return true;
}

bool write_schema_cases(const std::string& data_dir, const std::string& out_dir, std::ostream& list) {
  std::string schema, name;
  size_t n = 0;
  for (const JsonSchemaCase& c : load_json_schema_cases(data_dir + "/json_schema_cases.txt")) {
    if (c.schema != schema) {
      schema = c.schema;
      name = numbered('s', n++, "json");
      if (!write_file(out_dir + "/" + name, schema)) return (std::cerr << "cannot write " << name << "\n"), false;
    }
    peak::json::Value instance;
    std::string error;
    if (!peak::json::parse(c.instance, &instance, &error)) {
      return (std::cerr << "json_schema_cases.txt:" << c.line << ": " << error << "\n"), false;
    }
    list << name << " - " << (c.valid ? "complete " : "incomplete ") << escaped(peak::json::write(instance)) << '\n';
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: write_grammar_case_list DATA_DIR OUT_DIR\n";
    return 2;
  }
  std::ofstream list(std::string(argv[2]) + "/grammar_cases.txt", std::ios::binary);
  if (!list) return (std::cerr << "cannot write " << argv[2] << "/grammar_cases.txt\n"), 1;
  try {
    if (!write_gbnf_cases(argv[1], argv[2], list) || !write_schema_cases(argv[1], argv[2], list)) return 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return list.flush() ? 0 : 1;
}
