#include "gbnf_cases.h"

#include <fstream>
#include <sstream>

namespace peak::sampling::testing {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `"..."` from the start of `in` (escapes \\ \" \n \r \t \xHH) into
// *out; returns what follows it, or sets *error.
std::string read_quoted(const std::string& in, std::string* out, std::string* error) {
  if (in.empty() || in[0] != '"') {
    *error = "expected a quoted string";
    return "";
  }
  out->clear();
  for (size_t i = 1; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '"') return in.substr(i + 1);
    if (c != '\\') {
      *out += c;
      continue;
    }
    const char e = i + 1 < in.size() ? in[++i] : '\0';
    if (e == '\\' || e == '"') {
      *out += e;
    } else if (e == 'n' || e == 'r' || e == 't') {
      *out += e == 'n' ? '\n' : e == 'r' ? '\r' : '\t';
    } else if (e == 'x' && i + 2 < in.size() && hex_digit(in[i + 1]) >= 0 && hex_digit(in[i + 2]) >= 0) {
      *out += static_cast<char>(hex_digit(in[i + 1]) * 16 + hex_digit(in[i + 2]));
      i += 2;
    } else {
      *error = "bad escape in a quoted string";
      return "";
    }
  }
  *error = "unterminated quoted string";
  return "";
}

// " root=NAME" or nothing.
bool read_root(const std::string& rest, std::string* root) {
  if (rest.empty()) return true;
  if (rest.rfind(" root=", 0) != 0 || rest.size() == 6) return false;
  *root = rest.substr(6);
  return true;
}

bool read_case(const std::string& line, GbnfCase* c, std::string* error) {
  const size_t space = line.find(' ');
  const std::string word = line.substr(0, space);
  const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
  if (word == "error") {
    c->is_error = true;
    char colon = 0;
    std::istringstream where(rest);
    where >> c->line >> colon >> c->column;
    if (!where || colon != ':' || where.get() != ' ') return (*error = "expected error LINE:COLUMN words"), false;
    std::getline(where, c->message);
    return true;
  }
  if (word == "complete") c->verdict = GrammarVerdict::kComplete;
  if (word == "prefix") c->verdict = GrammarVerdict::kPrefix;
  if (word != "complete" && word != "prefix" && word != "reject") return (*error = "unknown line"), false;
  const std::string after = read_quoted(rest, &c->text, error);
  if (error->empty() && !after.empty()) *error = "text after the quoted string";
  return error->empty();
}

// Starts a block from a `grammar` or `grammar-text` line; false if the line is neither.
bool read_block_start(const std::string& line, GbnfBlock* block, bool* multiline, std::string* error) {
  if (line.rfind("grammar-text ", 0) == 0) {
    const std::string rest = read_quoted(line.substr(13), &block->grammar, error);
    if (error->empty() && !read_root(rest, &block->root)) *error = "expected root=NAME";
    *multiline = false;
    return true;
  }
  if (line == "grammar" || line.rfind("grammar ", 0) == 0) {
    if (!read_root(line.substr(7), &block->root)) *error = "expected root=NAME";
    *multiline = true;
    return true;
  }
  return false;
}

}  // namespace

GbnfCaseFile load_gbnf_cases(const std::string& path) {
  GbnfCaseFile file;
  std::ifstream in(path, std::ios::binary);
  if (!in) return GbnfCaseFile{{}, "cannot open " + path};
  std::string line;
  int number = 0;
  bool in_grammar = false;
  std::string error;
  while (error.empty() && std::getline(in, line)) {
    ++number;
    GbnfBlock block;
    bool multiline = false;
    if (in_grammar) {
      if (line == "end") {
        in_grammar = false;
      } else {
        file.blocks.back().grammar += line + "\n";
      }
    } else if (line.empty() || line[0] == '#') {
    } else if (read_block_start(line, &block, &multiline, &error)) {
      block.file_line = number;
      file.blocks.push_back(block);
      in_grammar = multiline;
    } else if (file.blocks.empty()) {
      error = "a case before any grammar";
    } else {
      GbnfCase c;
      c.file_line = number;
      if (read_case(line, &c, &error)) file.blocks.back().cases.push_back(c);
    }
    if (!error.empty()) error = path + ":" + std::to_string(number) + ": " + error + ": " + line;
  }
  if (error.empty() && in_grammar) error = path + ": a grammar without its end line";
  file.error = error;
  return file;
}

}  // namespace peak::sampling::testing
